"""`--diff`: a patch that `git apply` and `patch -p1` accept, in each file's own bytes.

- Paths are `a/<path>` and `b/<path>`, relative to the current directory (run `git apply` or
  `patch -p1` from where the codemod ran); a file outside it is named by its absolute path
  without the leading `/` (apply from `/`).
- Each file's lines are encoded with its own codec (PEP 263 cookie, BOM kept), so the patch
  matches the bytes on disk; only `\\n` ends a line, as for patch tools (`str.splitlines` would
  also split on form feeds and other separators Python knows).
- A last line without a newline is followed by `\\ No newline at end of file`, as diff writes it.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from codemods.io.files import Outcome

_LINE = re.compile(r"[^\n]*\n|[^\n]+$")
NO_NEWLINE = b"\\ No newline at end of file\n"


def patch(outcomes: Iterable[Outcome]) -> Iterator[bytes]:
    """The unified diff of every changed outcome, as bytes."""
    for outcome in outcomes:
        if outcome.error is None and outcome.changed:
            yield from _file_patch(outcome)


def patch_path(path: str) -> str:
    """The path a patch names a file by: relative to the current directory when under it."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    chosen = absolute.lstrip(os.sep) if relative.startswith(os.pardir) else relative
    return Path(chosen).as_posix()


def _file_patch(outcome: Outcome) -> Iterator[bytes]:
    codec = "utf-8" if outcome.encoding == "utf-8-sig" else outcome.encoding
    bom = "\ufeff" if outcome.encoding == "utf-8-sig" else ""
    before = _LINE.findall(bom + outcome.original)
    after = _LINE.findall(bom + outcome.text)
    name = patch_path(outcome.path)
    lines = difflib.unified_diff(before, after, f"a/{name}", f"b/{name}")
    for index, line in enumerate(lines):
        if index < 2:  # the ---/+++ header: the path, always UTF-8 (as git writes it)
            yield line.encode("utf-8", "surrogateescape")
            continue
        yield line.encode(codec)
        if not line.endswith("\n"):  # a last line without its newline
            yield b"\n" + NO_NEWLINE
