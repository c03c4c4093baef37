"""What `verify` shows: the steps side by side, the verdict and its reasons; --json."""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from typing import Any

from compat_lso.verify.compare import Divergence, Outcome, differences
from compat_lso.verify.explain import place
from compat_lso.verify.reasons import Reasons
from compat_lso.verify.trace_file import Step, Trace

TABLE_ROWS = 10


SHOWN_FINDINGS = 12  # beyond the marked ones; --json FILE has them all


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}" if math.isfinite(value) else repr(value)
    return str(value)


def table(
    before: Trace, after: Trace, divergence: Divergence | None, rows: int, rtol: float = 0.0
) -> str:
    """The first steps of both runs side by side (the before run's order), up to the
    divergence and one step past it; every row that differs is marked, the first divergence
    and any after it (a skipped step not counted shifts Adam's updates from the next step on).
    Under the table, what a `-` means where one shows."""
    after_by_key = {s.key: s for s in after.steps}
    keys = [s.key for s in before.steps] + [
        s.key for s in after.steps if s.key not in {b.key for b in before.steps}
    ]
    limit = max(rows, divergence.position + 1 if divergence else 0)
    before_by_key = {s.key: s for s in before.steps}
    several = max(before.optimizers, after.optimizers) > 1
    header = ["step"] + (["opt"] if several else [])
    header += ["before: loss", "after: loss", "before: scale", "after: scale"]
    header += ["applied b/a", "iterations b/a"]
    lines = [header]
    for key in keys[:limit]:
        b, a = before_by_key.get(key), after_by_key.get(key)
        row = [str(key[1])] + ([str(key[0])] if several else [])
        row += [
            _losses(b),
            _losses(a),
            _scale(b),
            _scale(a),
            f"{_number(b.applied if b else None)}/{_number(a.applied if a else None)}",
            f"{_number(b.iterations if b else None)}/{_number(a.iterations if a else None)}",
        ]
        if b is None or a is None:
            row.append(f"<- only the {'before' if a is None else 'after'} run made this step")
        elif found := differences(b, a, rtol):
            row.append("<- differs: " + ", ".join(sorted({d.field for d in found})))
        lines.append(row)
    widths = [max(len(r[i]) for r in lines if i < len(r)) for i in range(len(header))]
    text = []
    for row in lines:
        cells = [cell.rjust(widths[i]) for i, cell in enumerate(row[: len(header)])]
        text.append("  ".join(cells + row[len(header) :]).rstrip())
    hidden = len(keys) - min(limit, len(keys))
    if hidden > 0:
        differing = sum(
            1
            for key in keys[limit:]
            if (b := before_by_key.get(key)) is None
            or (a := after_by_key.get(key)) is None
            or differences(b, a, rtol)
        )
        text.append(
            f"... {hidden} more step(s), {differing} of them differing (--json FILE has them all)"
        )
    if any(
        s is not None and s.scale_before != s.scale_after
        for key in keys[:limit]
        for s in (before_by_key.get(key), after_by_key.get(key))
    ):
        text.append("(scale: the one the step used; -> the one it left for the next step)")
    if any(
        (b := before_by_key.get(key)) is not None
        and (a := after_by_key.get(key)) is not None
        and not (b.losses and a.losses)
        for key in keys[:limit]
    ):
        text.append(
            "(loss -: that run scaled no loss through the optimizer's scale_loss or "
            "get_scaled_loss, so there is no loss to show or compare; the steps still are)"
        )
    if any(len(s.losses) > 1 for s in [*before.steps, *after.steps]):
        text.append(
            "(loss: each loss the step scaled through the optimizer, in order, all compared; "
            "a constant such as scale_loss(1.0) is not a loss)"
        )
    return "\n".join(text)


def _losses(step: Step | None) -> str:
    """Every loss the step scaled through the optimizer, in order ("-": none)."""
    if step is None or not step.losses:
        return "-"
    return ", ".join(_number(loss) for loss in step.losses)


def _scale(step: Step | None) -> str:
    """The scale the step used, and where the step changed it, the one it left."""
    if step is None:
        return "-"
    used, left = _number(step.scale_before), _number(step.scale_after)
    return used if used == left else f"{used} -> {left}"


def _step_line(step: Step | None) -> str:
    if step is None:
        return "no such step"
    first = step.digest[0] if step.digest else None
    digest = f", {first[0]} sum of squares {first[1]!r}" if first else ""
    rate = "" if step.learning_rate is None else f", learning rate {_number(step.learning_rate)}"
    none = (
        f", gradients None: {step.none_gradients} of {step.gradients}"
        if step.none_gradients
        else ""
    )
    losses = "losses " if len(step.losses) > 1 else "loss "
    return (
        f"{losses}{_losses(step)}, scale {_number(step.scale_before)} -> "
        f"{_number(step.scale_after)}, applied {_number(step.applied)}, iterations "
        f"{step.iterations}{rate}{none}{digest}"
    )


def divergence_text(divergence: Divergence, reasons: Reasons, before_label: str) -> str:
    lines = [
        f"  before ({before_label}): {_step_line(divergence.before)}",
        f"  after (working tree): {_step_line(divergence.after)}",
    ]
    if reasons.before_place or reasons.after_place:
        lines.append(
            f"  the step's line: {reasons.before_place or '-'} before, "
            f"{reasons.after_place or '-'} after"
        )
    upgrade = [d.field for d in divergence.differences if d.field in _UPGRADE]
    if upgrade:
        lines.append(
            f"  not loss scaling: {' and '.join(_UPGRADE[f] for f in upgrade)}: no loss scale "
            "rule explains that; TensorFlow or Keras trains this code differently (a "
            "@tf.function on a layer's call leaves Keras 3 no gradient for the variables it "
            "makes, Keras 3's optimizers never call a _decayed_lr override)"
        )
    if reasons.failure is not None:
        mapped = (
            f" (line {reasons.failure_before_line} before)"
            if reasons.failure_before_line is not None
            else ""
        )
        lines.append(f"  the run that lacks the step raised at {reasons.failure}{mapped}")
    lines += _audit_lines(reasons)
    lines += _codemod_lines(reasons)
    return "\n".join(lines)


# Differences no loss scale rule makes: a break of the TensorFlow or Keras upgrade itself.
_UPGRADE = {
    "none_gradients": "gradients None in one run only",
    "learning_rate": "another learning rate",
}


def _audit_lines(reasons: Reasons) -> list[str]:
    if reasons.audit is None:
        return ["  audit: not run on this side (--before CMD)"]
    step = f"step {reasons.step}" if reasons.step is not None else "the step"
    how = "" if reasons.audit_by_step else " (matched by line: the trace does not say which step)"
    lines = [
        f"  audit at {_record_place(r)}{_at_step(r, reasons)}: {r['kind']} "
        f"(x{r['count']} in the run): {r['message']}{how}"
        for r in reasons.audit
    ]
    off = f": {reasons.audit_off}" if reasons.audit_off else ""
    if lines and off:
        lines.append(f"  audit{off}")
    if not lines:
        where = f" ({reasons.before_place})" if reasons.before_place else ""
        lines.append(f"  audit: nothing recorded at {step}{where}{off}")
        other = reasons.audit_other_steps
        lines += [
            f"    at other steps: {_record_place(r)}: {r['kind']} (x{r['count']})" for r in other
        ]
        lines += [
            f"    elsewhere: {_record_place(r)}: {r['kind']} (x{r['count']})"
            for r in reasons.audit_elsewhere[: max(0, 3 - len(other))]
        ]
    return lines


def _record_place(record: dict[str, Any]) -> str:
    return f"{str(record['file']).rsplit('/', 1)[-1]}:{record['line']}"


def _at_step(record: dict[str, Any], reasons: Reasons) -> str:
    """Whether the record is the step's own (at this step) or its line's (wherever it runs)."""
    from compat_lso.audit.kinds import STEP_KINDS

    if reasons.audit_by_step and record["kind"] in STEP_KINDS:
        return f", at step {reasons.step}" if reasons.step is not None else ", at this step"
    lines = ((reasons.before_place, "step's"), (reasons.optimizer_place, "optimizer's"))
    for at, label in lines:
        if at is not None and record["line"] == at.line:
            return f" (the {label} line)"
    return ""


def _marks(reasons: Reasons) -> dict[tuple[str, int], str]:
    """(file, line) -> what it is: the step's line, the optimizer's, the line that raised."""
    marks = {}
    at = reasons.before_place
    if reasons.optimizer_place is not None:
        made = reasons.optimizer_place
        marks[made.shown, made.line] = "the optimizer's line (where the before run made it)"
    if at is not None:
        marks[at.shown, at.line] = "the step's line"
        if reasons.failure_before_line is not None:
            marks[at.shown, reasons.failure_before_line] = "the line that raised"
    return marks


def _codemod_lines(reasons: Reasons) -> list[str]:
    if reasons.before_place is None or not reasons.targets:
        return []
    files = list(reasons.targets)
    made = _made(reasons.targets)
    marks = _marks(reasons)
    marked = [f for f in reasons.findings if (f.file, f.line) in marks]
    shown = [f"    {f.file}:{f.line}: {f}  <- {marks[f.file, f.line]}" for f in marked]
    rest = [f for f in reasons.findings if f not in marked and f.kind != "rewritten"]
    shown += [f"    {f.file}:{f.line}: {f}" for f in rest[:SHOWN_FINDINGS]]
    if len(rest) > SHOWN_FINDINGS:
        shown.append(
            f"    ... {len(rest) - SHOWN_FINDINGS} more note(s) and manual work (--json FILE "
            "has them all)"
        )
    if not shown:
        return [f"  codemod{made}: no finding or note in {_files(files)}"]
    return [f"  codemod{made}, over {_files(files)}:", *shown]


def _files(files: list[str]) -> str:
    if len(files) == 1:
        return files[0]
    named = ", ".join(files[:6]) + (f", ... ({len(files)} files)" if len(files) > 6 else "")
    return f"the project's files both runs imported ({named})"


def _made(targets: dict[str, list[str]]) -> str:
    """Which target made the after files (a file no target changes is every target's output),
    and the files no target's output is (a hand edit: every target's findings there)."""
    unmatched = [file for file, matched in targets.items() if not matched]
    sets = [set(matched) for matched in targets.values() if matched]
    common = sorted(set.intersection(*sets)) if sets else []
    plural = "s" if len(targets) - len(unmatched) > 1 else ""
    words = []
    if common:
        words.append(f"--target {' / '.join(common)} made the after file{plural}")
    elif sets:
        words.append("no one target made every after file: each file's own target's findings")
    if unmatched:
        words.append(
            f"no target's output is the after {', '.join(unmatched)}: every target's findings there"
        )
    return f" ({'; '.join(words)})"


def verdict_line(outcome: Outcome, rtol: float) -> str:
    exactness = "bit for bit" if rtol == 0 else f"within rtol={rtol:g}"
    if outcome.status == "equal":
        return f"verify: equal: {outcome.message}, {exactness}"
    if outcome.status == "diverged":
        return f"verify: DIVERGED: {outcome.message}"
    return f"verify: could not run: {outcome.message}"


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _step_dict(
    step: Step | None, roots: dict[str, Any] | None = None, side: str = ""
) -> dict[str, Any] | None:
    if step is None:
        return None
    record = dataclasses.asdict(step)
    record["class"] = record.pop("cls")
    if roots is not None:  # `where` as the user reads it, both sides alike (not the temp tree)
        root, cwd = roots[side], roots["cwd"]
        at = place(step.where, root, cwd)
        record["where"] = str(at) if at is not None else step.where
    return record


def write_json(path: pathlib.Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(_plain(document), indent=1) + "\n", encoding="utf-8")


def document(
    outcome: Outcome,
    sides: dict[str, tuple[Trace, dict[str, Any]]],
    reasons: Reasons | None,
    settings: dict[str, Any],
    roots: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole comparison. `roots`: "before" and "after", the folder each side's files are
    relative to (the REF's checkout, the repository; None: the working directory), and "cwd":
    every step's `where` is then a path relative to its side's root, alike on both sides."""
    result: dict[str, Any] = {
        "verdict": outcome.status,
        "exit_status": outcome.exit_status,
        "message": outcome.message,
        "steps_equal": outcome.compared,
        **settings,
    }
    for name, (trace, about) in sides.items():
        result[name] = {
            **about,
            "versions": (trace.start or {}).get("versions"),
            "end": trace.end,
            "steps": [_step_dict(s, roots, name) for s in trace.steps],
        }
    divergence = outcome.divergence
    if divergence is not None:
        result["divergence"] = {
            "optimizer": divergence.optimizer,
            "step": divergence.step,
            "position": divergence.position,
            "differences": [dataclasses.asdict(d) for d in divergence.differences],
            "before": _step_dict(divergence.before, roots, "before"),
            "after": _step_dict(divergence.after, roots, "after"),
        }
        if reasons is not None:
            result["divergence"].update(
                before_line=str(reasons.before_place) if reasons.before_place else None,
                after_line=str(reasons.after_place) if reasons.after_place else None,
                raised_at=str(reasons.failure) if reasons.failure else None,
                raised_at_before_line=reasons.failure_before_line,
                optimizer_line=str(reasons.optimizer_place) if reasons.optimizer_place else None,
                audit=reasons.audit,
                audit_by_step=reasons.audit_by_step,
                audit_other_steps=reasons.audit_other_steps,
                audit_off=reasons.audit_off,
                codemod_targets=reasons.targets,
                codemod=[dataclasses.asdict(f) for f in reasons.findings],
            )
    return result
