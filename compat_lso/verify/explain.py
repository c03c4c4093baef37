"""Why a step differs: the audit's records and the codemod's findings at the step's line.

The before run goes through `run --audit`, which records at the user's file:line each place
where Keras 3's own LossScaleOptimizer trains differently from Keras 2's meaning (unscaled
gradients, Keras 3's update rule, a skipped step it would not count, ...;
compat_lso/audit/__init__.py). The codemod (codemods.apply.engine, imported here only, and only when
a divergence is explained) runs over the before side's source of the file that made the diverging
step, for each target; the target whose output is the after side's file is the migration that was
made, and its findings and notes at that line are shown (all targets' where none matches, as after a
hand edit).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import pathlib
import re
from typing import Any


@dataclasses.dataclass(frozen=True)
class Place:
    """A user's line: `path` as the run saw it (absolute), and `shown` as the user reads it."""

    path: pathlib.Path
    line: int
    shown: str

    def __str__(self) -> str:
        return f"{self.shown}:{self.line}"


def place(where: str, root: pathlib.Path | None, cwd: pathlib.Path) -> Place | None:
    """The trace's "path:line"; `root`: the folder the path lies under (the REF's checkout)."""
    path_text, _, line_text = where.rpartition(":")
    if not path_text or not line_text.isdigit():
        return None
    path = pathlib.Path(path_text)
    if not path.is_absolute():
        path = cwd / path
    shown = os.path.relpath(path, cwd)
    if root is not None and _under(path.resolve(), root.resolve()):
        shown = path.resolve().relative_to(root.resolve()).as_posix()
    return Place(path, int(line_text), shown)


def audit_records(audit_json: pathlib.Path | None) -> list[dict[str, Any]] | None:
    """The before run's audit records (None: no audit was run, or it wrote nothing)."""
    document = audit_document(audit_json)
    if document is None:
        return None
    records: list[dict[str, Any]] = document.get("records", [])
    return records


def audit_document(audit_json: pathlib.Path | None) -> dict[str, Any] | None:
    """The before run's whole audit file (None: no audit was run, or it wrote nothing)."""
    if audit_json is None:
        return None
    try:
        document: dict[str, Any] = json.loads(audit_json.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return document


def audit_off(document: dict[str, Any] | None) -> str | None:
    """Why the audit could not see Keras 3's differences in the before run (None: it could)."""
    if document is None:
        return "the before run wrote no audit: it ended before importing TensorFlow, or was killed"
    if not document.get("keras_3", True):
        return (
            f"the before run was on Keras 2 ({document.get('keras')}): Keras 2's own "
            "LossScaleOptimizer ran, so Keras 3's differences were not audited"
        )
    return None


def records_at(records: list[dict[str, Any]], at: Place) -> list[dict[str, Any]]:
    wanted = os.path.realpath(at.path)
    return [
        r
        for r in records
        if r.get("line") == at.line and os.path.realpath(str(r.get("file", ""))) == wanted
    ]


@dataclasses.dataclass(frozen=True)
class CodemodFinding:
    target: str
    code: str
    line: int  # in the before side's file
    col: int
    message: str
    kind: str  # "manual work", "rewritten" or "note"

    def __str__(self) -> str:
        return f"{self.code} [{self.kind}, --target {self.target}] {self.message}"


def codemod_findings(
    before_file: pathlib.Path, after_file: pathlib.Path | None
) -> tuple[list[str], list[CodemodFinding]]:
    """The targets whose output is `after_file` (empty: none is), and the codemod's findings in
    `before_file` (at its lines) for those targets, or for every target when none matches."""
    from codemods.apply import engine  # lazily: the runtime package never imports the codemod
    from codemods.table import TARGETS

    text = _text(before_file)
    if text is None:
        return [], []
    after_text = _text(after_file) if after_file is not None else None
    results: dict[str, Any] = {}
    for target in TARGETS:
        try:
            results[target] = engine.migrate(text, target)
        except engine.MigrationError:
            continue
    matched: list[str] = [t for t, r in results.items() if r.text == after_text]
    found = []
    for name in matched or list(results):
        for f in results[name].findings:
            kind = "note" if f.note else "rewritten" if f.fixed else "manual work"
            found.append(CodemodFinding(name, f.code, f.line, f.col, f.message, kind))
    return matched, sorted(found, key=lambda f: (f.line, f.col, f.target))


def _text(path: pathlib.Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# `  File "train.py", line 61, in train` in a Python traceback.
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.MULTILINE)


def error_site(output: str, cwd: pathlib.Path, library: list[pathlib.Path]) -> Place | None:
    """The innermost frame of the last traceback in `output` that lies under `cwd` and in none
    of the `library` folders (compat_lso, site-packages): the user's line that raised."""
    found = None
    for match in _FRAME.finditer(output):
        path = pathlib.Path(match["path"])
        if not path.is_absolute():
            path = cwd / path
        resolved = path.resolve()
        if not resolved.is_file() or not _under(resolved, cwd.resolve()):
            continue
        if any(_under(resolved, folder.resolve()) for folder in library):
            continue
        found = Place(path, int(match["line"]), os.path.relpath(path, cwd))
    return found


def _under(path: pathlib.Path, folder: pathlib.Path) -> bool:
    return path == folder or folder in path.parents


def map_line(after_text: str, before_text: str, line: int) -> int:
    """Line `line` of the after side's file -> the line of the before side's file it came from
    (the start of the block a rewrite replaced, where lines were rewritten)."""
    after_lines, before_lines = after_text.splitlines(), before_text.splitlines()
    matcher = difflib.SequenceMatcher(None, after_lines, before_lines, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if a1 <= line - 1 < a2 or (tag == "insert" and a1 == line - 1):
            if tag == "equal":
                return b1 + (line - 1 - a1) + 1
            return min(b1 + (line - 1 - a1), max(b1, b2 - 1)) + 1
    return line
