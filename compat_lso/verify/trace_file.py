"""Reading one run's trace (JSON Lines written by compat_lso.trace; docs/verify.md, "The trace").

A trace is a "start" line, one "step" line per loss scale optimizer step, then the files of the
modules it imported ("modules") and how the run ended: "stopped" (after --steps N steps),
"exit" (the program ended) or "error" (an uncaught exception). A process killed mid-write
leaves no end line and may leave half a line: both read as "the run ended without saying how",
which the caller reports with the process's stderr.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any


@dataclasses.dataclass(frozen=True)
class Step:
    """One step of one loss scale optimizer (the trace's "step" line)."""

    optimizer: int  # 0-based, in the order the process created loss scale optimizers
    step: int  # 1-based count of this optimizer's steps
    cls: str
    where: str  # "path:line" of the user's line that made the step
    scale_before: float
    scale_after: float
    applied: bool
    iterations: int
    loss: float | None  # the first of `losses`
    # (name, sum of squares, fingerprint of its bytes: 16 hex digits, None if not traced)
    digest: tuple[tuple[str, float, str | None], ...]
    # Each loss the code scaled through the optimizer for this step, in order (not a constant).
    losses: tuple[float, ...] = ()
    learning_rate: float | None = None  # the one the step used; None: not read
    gradients: int | None = None  # handed to the step; None: not recorded
    none_gradients: int | None = None  # of them None (their variables are not updated)
    created: str = ""  # "path:line" where the optimizer was made
    # The audit's records that occurred at this step, (kind, "path:line"); None: no audit.
    audit: tuple[tuple[str, str], ...] | None = None

    @property
    def key(self) -> tuple[int, int]:
        return (self.optimizer, self.step)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Step:
        loss = record.get("loss")
        losses = record.get("losses", [] if loss is None else [loss])
        audit = record.get("audit")
        return cls(
            optimizer=int(record["optimizer"]),
            step=int(record["step"]),
            cls=str(record.get("class", "")),
            where=str(record.get("where", "")),
            scale_before=record["scale_before"],
            scale_after=record["scale_after"],
            applied=bool(record["applied"]),
            iterations=int(record["iterations"]),
            loss=loss,
            digest=tuple(_digest_row(row) for row in record.get("digest", [])),
            losses=tuple(losses),
            learning_rate=record.get("learning_rate"),
            gradients=record.get("gradients"),
            none_gradients=record.get("none_gradients"),
            created=str(record.get("created", "")),
            audit=None if audit is None else tuple((str(k), str(at)) for k, at in audit),
        )


@dataclasses.dataclass
class Trace:
    """One run: its steps in the order they were made, and how it ended (None: unsaid)."""

    start: dict[str, Any] | None = None
    steps: list[Step] = dataclasses.field(default_factory=list)
    end: dict[str, Any] | None = None
    modules: list[str] = dataclasses.field(default_factory=list)  # the files it imported

    @property
    def optimizers(self) -> int:
        return 1 + max((s.optimizer for s in self.steps), default=-1)

    def ended_how(self) -> str:
        """How the run ended, in words that follow "the run" or "it", for messages."""
        if self.start is None and self.end is None:
            return (
                "wrote no trace (a command that does not run the program through `python -m "
                "compat_lso run` or `trace` writes none, nor one that fails before)"
            )
        if self.end is None:
            return "ended without writing how (killed, or crashed in native code)"
        event = self.end.get("event")
        if event == "stopped":
            return f"stopped after {self.end.get('steps')} steps, as asked"
        if event == "exit":
            return f"ended with exit status {self.end.get('status')}"
        return f"raised {self.end.get('type')}: {self.end.get('message')}"

    @property
    def failed(self) -> bool:
        """The run did not end normally: an exception, a non-zero exit, or no end line."""
        if self.end is None:
            return True
        event = self.end.get("event")
        if event == "stopped":
            return False
        if event == "exit":
            return self.end.get("status") not in (0, None)
        return True


def read(path: pathlib.Path) -> Trace:
    """The trace at `path`; an absent or empty file is a run that never started tracing."""
    trace = Trace()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return trace
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            break  # the half line of a killed process: nothing after it
        event = record.get("event")
        if event == "start":
            trace.start = record
        elif event == "step":
            trace.steps.append(Step.from_record(record))
        elif event == "modules":
            trace.modules = [str(f) for f in record.get("files", [])]
        elif event in ("stopped", "exit", "error"):
            trace.end = record
    return trace


def count_steps(path: pathlib.Path) -> dict[int, int]:
    """Steps made so far per optimizer (for the progress bar; cheap, tolerant of half lines)."""
    counts: dict[int, int] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return counts
    for line in text.splitlines():
        if '"step"' not in line:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("event") == "step":
            counts[record["optimizer"]] = max(counts.get(record["optimizer"], 0), record["step"])
    return counts


def _digest_row(row: list[Any]) -> tuple[str, float, str | None]:
    name, squares, *fingerprint = row
    return (str(name), squares, str(fingerprint[0]) if fingerprint else None)
