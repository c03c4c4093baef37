"""`verify --plot FILE.png`: the loss and the loss scale of both runs on one figure (matplotlib,
the `plot` extra, imported only here and only when asked for)."""

from __future__ import annotations

import math
import pathlib
from typing import Any

from compat_lso.verify.compare import Outcome
from compat_lso.verify.trace_file import Trace

PLOT_EXTRA = "plot"


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
