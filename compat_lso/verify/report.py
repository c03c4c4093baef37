"""What `verify` shows: the steps side by side, the verdict and its reasons; --json, --plot."""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from typing import Any

from compat_lso.verify.compare import Divergence, Outcome, differences
from compat_lso.verify.explain import CodemodFinding, Place, place
from compat_lso.verify.trace_file import Step, Trace

TABLE_ROWS = 10
PLOT_EXTRA = "plot"


@dataclasses.dataclass
class Reasons:
    """Why the diverging step differs: its lines, the audit's records and codemod's findings."""

    before_place: Place | None = None
    after_place: Place | None = None
    audit: list[dict[str, Any]] | None = None  # None: no audit ran
    audit_off: str | None = None  # why it could not see Keras 3's differences (Keras 2, ...)
    audit_elsewhere: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # Where the run that lacks the step raised, and that line in the before side's file.
    failure: Place | None = None
    failure_before_line: int | None = None
    targets: list[str] = dataclasses.field(default_factory=list)
    findings: list[CodemodFinding] = dataclasses.field(default_factory=list)  # the whole file


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
            _number(b.loss if b else None),
            _number(a.loss if a else None),
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
        and None in (b.loss, a.loss)
        for key in keys[:limit]
    ):
        text.append(
            "(loss -: that run scaled no loss through the optimizer's scale_loss or "
            "get_scaled_loss, so there is no loss to show or compare; the steps still are)"
        )
    return "\n".join(text)


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
    return (
        f"loss {_number(step.loss)}, scale {_number(step.scale_before)} -> "
        f"{_number(step.scale_after)}, applied {_number(step.applied)}, iterations "
        f"{step.iterations}{digest}"
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


def _audit_lines(reasons: Reasons) -> list[str]:
    if reasons.audit is None:
        return ["  audit: not run on this side (--before CMD)"]
    lines = [
        f"  audit at {reasons.before_place}: {r['kind']} (x{r['count']}): {r['message']}"
        for r in reasons.audit
    ]
    off = f": {reasons.audit_off}" if reasons.audit_off else ""
    if lines and off:
        lines.append(f"  audit{off}")
    if not lines:
        lines.append(f"  audit: nothing recorded at {reasons.before_place or 'the step'}{off}")
        lines += [
            f"    elsewhere: {r['file'].rsplit('/', 1)[-1]}:{r['line']}: {r['kind']} "
            f"(x{r['count']})"
            for r in reasons.audit_elsewhere[:3]
        ]
    return lines


def _codemod_lines(reasons: Reasons) -> list[str]:
    at = reasons.before_place
    if at is None:
        return []
    made = (
        f" (--target {' / '.join(reasons.targets)} made the after file)"
        if reasons.targets
        else " (no target's output is the after file: every target's findings)"
    )
    interesting = {at.line: "the step's line"}
    if reasons.failure_before_line is not None:
        interesting[reasons.failure_before_line] = "the line that raised"
    shown = [
        f"    {at.shown}:{f.line}: {f}  <- {interesting[f.line]}"
        for f in reasons.findings
        if f.line in interesting
    ]
    shown += [
        f"    {at.shown}:{f.line}: {f}"
        for f in reasons.findings
        if f.line not in interesting and f.kind != "rewritten"
    ]
    if not shown:
        return [f"  codemod{made}: no finding or note in {at.shown}"]
    return [f"  codemod{made}:", *shown]


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
                audit=reasons.audit,
                audit_off=reasons.audit_off,
                codemod_targets=reasons.targets,
                codemod=[dataclasses.asdict(f) for f in reasons.findings],
            )
    return result


def check_plot_available() -> str | None:
    """None, or the error to show when matplotlib (the `plot` extra) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return (
            "--plot needs matplotlib, which is not installed: install compat-lso's "
            f'`{PLOT_EXTRA}` extra (pip install ".[{PLOT_EXTRA}]" in compat-lso\'s clone, or '
            "pip install matplotlib), or leave --plot out"
        )
    return None


def plot(path: pathlib.Path, before: Trace, after: Trace, outcome: Outcome) -> None:
    """`figure()` saved to `path`."""
    from matplotlib import pyplot

    drawn = figure(before, after, outcome)
    drawn.savefig(path)
    pyplot.close(drawn)


def figure(before: Trace, after: Trace, outcome: Outcome) -> Any:
    """Loss and loss scale of both runs, per optimizer, on one figure: two panels, or the scale
    alone where neither run scaled a loss through the optimizer (no loss to draw). The title is
    the verdict."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    has_loss = any(s.loss is not None for s in [*before.steps, *after.steps])
    drawn, panels = pyplot.subplots(2 if has_loss else 1, 1, sharex=True, figsize=(8, 6))
    loss_axes, scale_axes = (panels[0], panels[1]) if has_loss else (None, panels)
    for name, trace, style in (("before", before, "-o"), ("after", after, "--x")):
        for optimizer in range(trace.optimizers):
            steps = [s for s in trace.steps if s.optimizer == optimizer]
            label = name if trace.optimizers == 1 else f"{name}, optimizer {optimizer}"
            x = [s.step for s in steps]
            if loss_axes is not None:
                losses = [math.nan if s.loss is None else float(s.loss) for s in steps]
                loss_axes.plot(x, losses, style, label=label)
            scale_axes.plot(x, [float(s.scale_after) for s in steps], style, label=label)
    divergence = outcome.divergence
    top = loss_axes if loss_axes is not None else scale_axes
    if divergence is not None:
        for axes in (scale_axes, *([loss_axes] if loss_axes is not None else [])):
            axes.axvline(divergence.step, color="red", linewidth=0.8)
    if loss_axes is not None:
        loss_axes.set_ylabel("loss")
    scale_axes.set_ylabel("loss scale (after the step)")
    if before.steps or after.steps:
        scale_axes.set_yscale("log", base=2)
        top.legend()
    scale_axes.set_xlabel("step")
    if outcome.status == "equal":
        title = "equal"
    elif divergence is not None:
        title = f"diverged at step {divergence.step}"
    else:
        title = "could not run"
    if not has_loss:
        title += " (no loss scaled through the optimizer: scale only)"
    top.set_title(f"compat_lso verify: {title}")
    drawn.tight_layout()
    return drawn
