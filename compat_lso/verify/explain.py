"""Why a step differs: the audit's records and the codemod's findings at the step's line.

The before run goes through `run --audit`, which records at the user's file:line each place
where Keras 3's own LossScaleOptimizer trains differently from Keras 2's meaning (unscaled
gradients, Keras 3's update rule, a skipped step it would not count, ...; compat_lso/audit.py).
The codemod (codemods.engine, imported here only, and only when a divergence is explained) runs
over the before side's source of the file that made the diverging step, for each target; the
target whose output is the after side's file is the migration that was made, and its findings
and notes at that line are shown (all targets' where none matches, as after a hand edit).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
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
    if root is not None:
        try:
            shown = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return Place(path, int(line_text), shown)


def audit_records(audit_json: pathlib.Path | None) -> list[dict[str, Any]] | None:
    """The before run's audit records (None: no audit was run, or it wrote nothing)."""
    if audit_json is None:
        return None
    try:
        document = json.loads(audit_json.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    records: list[dict[str, Any]] = document.get("records", [])
    return records


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
    line: int
    col: int
    message: str
    kind: str  # "manual work", "rewritten" or "note"

    def __str__(self) -> str:
        return f"{self.code} [{self.kind}, --target {self.target}] {self.message}"


def codemod_findings(
    before_file: pathlib.Path, line: int, after_file: pathlib.Path | None
) -> tuple[list[str], list[CodemodFinding]]:
    """The targets whose output is `after_file` (empty: none is) and the findings at `line` of
    `before_file` for those targets (or for every target when none matches)."""
    from codemods import engine  # lazily: the runtime package never imports the codemod
    from codemods.table import TARGETS

    try:
        text = before_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return [], []
    after_text = None
    if after_file is not None:
        try:
            after_text = after_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            after_text = None
    results = {}
    for target in TARGETS:
        try:
            results[target] = engine.migrate(text, target)
        except engine.MigrationError:
            continue
    matched = [t for t, r in results.items() if after_text is not None and r.text == after_text]
    found = []
    for target in matched or list(results):
        for f in results[target].findings:
            if f.line != line:
                continue
            kind = "note" if f.note else "rewritten" if f.fixed else "manual work"
            found.append(CodemodFinding(target, f.code, f.line, f.col, f.message, kind))
    return matched, found
