"""Why a step differs: the audit's records of that step and the codemod's findings in the project.

The before run goes through `run --audit`, which records at the user's file:line each place
where Keras 3's own LossScaleOptimizer trains differently from Keras 2's meaning (unscaled
gradients, Keras 3's update rule, a skipped step it would not count, ...;
compat_lso/audit/__init__.py); its trace says which of the step's records occurred at each step,
so a step is matched to what the audit recorded at it, not to every record of its line. The
codemod (codemods.apply.engine, imported here only, and only when a divergence is explained)
runs over the before side's source of every file of the project that either run imported (the
trace's "modules" line, under each side's root), for each target; the target whose output is the
after side's file is the migration that was made, and its findings and notes are shown, those at
the step's line, the optimizer's line and the line that raised first (all targets' where none
matches, as after a hand edit).
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


def records_of_step(
    records: list[dict[str, Any]], occurred: tuple[tuple[str, str], ...]
) -> list[dict[str, Any]]:
    """The audit's records that occurred at a step: its trace line's (kind, "file:line")."""
    wanted = set()
    for kind, where in occurred:
        file, _, line = where.rpartition(":")
        wanted.add((kind, os.path.realpath(file), line))
    return [
        r
        for r in records
        if (r.get("kind"), os.path.realpath(str(r.get("file", ""))), str(r.get("line"))) in wanted
    ]


@dataclasses.dataclass(frozen=True)
class CodemodFinding:
    target: str
    code: str
    line: int  # in the before side's file
    col: int
    message: str
    kind: str  # "manual work", "rewritten" or "note"
    file: str = ""  # the file, as the user reads it (relative to the repository)

    def __str__(self) -> str:
        return f"{self.code} [{self.kind}, --target {self.target}] {self.message}"


def codemod_findings(
    before_file: pathlib.Path, after_file: pathlib.Path | None, shown: str = ""
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
            found.append(CodemodFinding(name, f.code, f.line, f.col, f.message, kind, shown))
    return matched, sorted(found, key=lambda f: (f.line, f.col, f.target))


def project_files(
    modules: dict[str, list[str]], roots: dict[str, pathlib.Path], extra: list[str]
) -> list[str]:
    """The project's files either run imported: per side ("before", "after") the files of its
    trace's "modules" line under that side's root (the REF's checkout, the repository), as paths
    relative to it, with `extra` (relative paths too: the files of the diverging step). Sorted,
    each once."""
    found = set(extra)
    for side, files in modules.items():
        root = roots[side].resolve()
        for file in files:
            path = pathlib.Path(file).resolve()
            if _under(path, root):
                found.add(path.relative_to(root).as_posix())
    return sorted(found)


def project_findings(
    files: list[str], before_root: pathlib.Path, after_root: pathlib.Path
) -> tuple[dict[str, list[str]], list[CodemodFinding]]:
    """`codemod_findings` for each of `files` (relative paths) that the before side has: the
    targets that made each file's after side, and every finding, file by file. Where one target
    made every file (a file two targets write alike, or one no target changes, says nothing of
    which ran), only that target's findings are kept in the files it made."""
    targets: dict[str, list[str]] = {}
    found: list[CodemodFinding] = []
    for relative in files:
        before_file = before_root / relative
        if not before_file.is_file():
            continue  # a file the migration added: the codemod reads the old files
        matched, findings = codemod_findings(before_file, after_root / relative, relative)
        targets[relative] = matched
        found += findings
    made = [set(matched) for matched in targets.values() if matched]
    ran = set.intersection(*made) if made else set()
    if ran:
        found = [f for f in found if f.target in ran or not targets[f.file]]
    return targets, found


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
