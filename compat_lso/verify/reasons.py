"""Why a step differs, gathered: its lines, the audit's records of it, the codemod's findings
across the project, and where a run that lacks it raised (`explain` reads each; `report` shows
them)."""

from __future__ import annotations

import dataclasses
import pathlib
import sys
from typing import Any

from compat_lso.verify import compare, explain, sides, trace_file
from compat_lso.verify.explain import CodemodFinding, Place


@dataclasses.dataclass
class Reasons:
    """Why the diverging step differs: its lines, the audit's records and codemod's findings."""

    before_place: Place | None = None
    after_place: Place | None = None
    optimizer_place: Place | None = None  # where the before run made the step's optimizer
    step: int | None = None
    # The audit's records of the step (and those of its lines recorded wherever the code runs,
    # a Keras 2 form, a fixed scale); None: no audit ran.
    audit: list[dict[str, Any]] | None = None
    audit_by_step: bool = False  # matched to the step (the trace says which occurred), or by line
    audit_other_steps: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    audit_off: str | None = None  # why it could not see Keras 3's differences (Keras 2, ...)
    audit_elsewhere: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # Where the run that lacks the step raised, and that line in the before side's file.
    failure: Place | None = None
    failure_before_line: int | None = None
    # Per file of the project (relative path): the targets whose output is its after side.
    targets: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    findings: list[CodemodFinding] = dataclasses.field(default_factory=list)  # every file's


def gather(
    divergence: compare.Divergence,
    runs: list[sides.Side],
    traces: dict[str, trace_file.Trace],
    cwd: pathlib.Path,
    repository: pathlib.Path | None,
) -> Reasons:
    before, after = runs
    """Why the diverging step differs: its lines in both runs, the audit's records of it, the
    codemod's findings in the project's files, and where the run that lacks it raised."""
    reasons = Reasons(step=divergence.step)
    if divergence.before is not None:
        reasons.before_place = explain.place(divergence.before.where, before.root, cwd)
        if divergence.before.created:
            reasons.optimizer_place = explain.place(divergence.before.created, before.root, cwd)
    if divergence.after is not None:
        reasons.after_place = explain.place(divergence.after.where, None, cwd)
    if before.audit_json is not None:
        _audit_reasons(reasons, divergence.before, explain.audit_document(before.audit_json))
    at = reasons.before_place
    if at is None or not at.path.is_file():
        return reasons
    if repository is not None and before.root is not None:
        # Every file of the project either run imported, the old side's against the new.
        places = [p for p in (at, reasons.optimizer_place) if p is not None]
        extra = [p.shown for p in places if not p.shown.startswith("..")]
        modules = {side: traces[side].modules for side in ("before", "after")}
        files = explain.project_files(modules, {"before": before.root, "after": repository}, extra)
        reasons.targets, reasons.findings = explain.project_findings(files, before.root, repository)
        after_file: pathlib.Path | None = repository / at.shown
    else:  # --before CMD: the old code is anywhere; the step's file against the after run's
        after_file = reasons.after_place.path if reasons.after_place is not None else None
        matched, reasons.findings = explain.codemod_findings(at.path, after_file, at.shown)
        reasons.targets = {at.shown: matched}
    lacking = after if divergence.after is None else before if divergence.before is None else None
    if lacking is not None and traces[lacking.name].failed:
        library = [pathlib.Path(sides.__file__).parents[1], pathlib.Path(sys.executable).parents[1]]
        reasons.failure = explain.error_site(lacking.tail(200), cwd, library)
        if (
            lacking is after
            and reasons.failure is not None
            and after_file is not None
            and reasons.failure.path.resolve() == after_file.resolve()
        ):
            reasons.failure_before_line = explain.map_line(
                after_file.read_text(encoding="utf-8"),
                at.path.read_text(encoding="utf-8"),
                reasons.failure.line,
            )
    return reasons


def _audit_reasons(
    reasons: Reasons, step: trace_file.Step | None, document: dict[str, Any] | None
) -> None:
    """The audit's records of the diverging step: those its trace line says occurred at it
    (not every record of its line: a skipped step's record is another step's), with those of
    its lines recorded wherever the code runs (a Keras 2 form at the step's line, a fixed scale
    at the optimizer's)."""
    from compat_lso.audit.kinds import STEP_KINDS

    reasons.audit_off = explain.audit_off(document)
    records = [] if document is None else document.get("records", [])
    at_lines: list[dict[str, Any]] = []
    for place in (reasons.before_place, reasons.optimizer_place):
        if place is not None:
            at_lines += [r for r in explain.records_at(records, place) if r not in at_lines]
    if step is not None and step.audit is not None:
        of_step = explain.records_of_step(records, step.audit)
        by_line = [r for r in at_lines if r["kind"] not in STEP_KINDS and r not in of_step]
        reasons.audit = of_step + by_line
        reasons.audit_by_step = True
        reasons.audit_other_steps = [
            r for r in at_lines if r["kind"] in STEP_KINDS and r not in of_step
        ]
    else:  # a trace that does not say (the before run made no such step: nothing of it)
        reasons.audit = at_lines if step is not None else []
    shown = reasons.audit + reasons.audit_other_steps
    reasons.audit_elsewhere = [r for r in records if r not in shown]
