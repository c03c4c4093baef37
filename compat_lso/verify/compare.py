"""The comparator: two traces, equal step for step or the first step where they differ.

Steps are matched by (optimizer, step): the K-th loss scale optimizer the process created, its
S-th step (a GAN's two optimizers, a MirroredStrategy's one, Model.fit's and a custom loop's
alike). The before run's order decides which difference is "first"; steps only the after run
made come after. Compared per step: the loss scale before and after, whether the update was
applied, `iterations`, the learning rate the step used, each loss (where both runs scaled it
through the optimizer: a run that never hands its loss over has none to compare), how many
variables the step updated (a None gradient updates none: how many were None is named) and the
digest of the updated variables (the sum of squares and the fingerprint of the bytes of each).
Equal means bit for bit (the fingerprint's part); `rtol` accepts a relative difference in the
floats (never in `applied`, `iterations` or the variables updated), and then leaves out the
fingerprint, which any rounding changes. NaN equals NaN: a step skipped on both sides for the
same overflow is the same step.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from compat_lso.verify.trace_file import Step, Trace

EQUAL, DIVERGED, FAILED = "equal", "diverged", "could not run"
EXIT_STATUS = {EQUAL: 0, DIVERGED: 1, FAILED: 2}


@dataclasses.dataclass(frozen=True)
class Difference:
    field: str  # "scale_before", ..., "digest" (then `variable` names which)
    before: Any
    after: Any
    variable: str | None = None


@dataclasses.dataclass(frozen=True)
class Divergence:
    """The first step that differs: `position` is its 1-based place among the before run's
    steps (the row of the table); `before`/`after` None where that run made no such step."""

    optimizer: int
    step: int
    position: int
    before: Step | None
    after: Step | None
    differences: tuple[Difference, ...]

    def describe(self) -> str:
        if self.before is None:
            return "the before run made no such step (the after run stepped more)"
        if self.after is None:
            return "the after run made no such step"
        return "; ".join(_describe(d) for d in self.differences)


@dataclasses.dataclass(frozen=True)
class Outcome:
    status: str  # EQUAL, DIVERGED or FAILED
    divergence: Divergence | None
    compared: int  # steps compared equal before the divergence (or in all)
    message: str

    @property
    def exit_status(self) -> int:
        return EXIT_STATUS[self.status]


def _same(a: Any, b: Any, rtol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, float | int):
        return bool(a == b)
    if not isinstance(b, float | int):
        return False
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return True
    return rtol > 0 and math.isclose(a, b, rel_tol=rtol, abs_tol=0.0)


def differences(before: Step, after: Step, rtol: float = 0.0) -> tuple[Difference, ...]:
    """What differs between two runs' same step (empty: the same step). Causes first: the
    gradients that were None, the learning rate; then what the step did."""
    found = []
    if len(before.digest) != len(after.digest):
        if None not in (before.none_gradients, after.none_gradients):
            found.append(
                Difference(
                    "none_gradients",
                    f"{before.none_gradients} of {before.gradients}",
                    f"{after.none_gradients} of {after.gradients}",
                )
            )
        else:
            names = ([n for n, *_ in before.digest], [n for n, *_ in after.digest])
            found.append(Difference("variables", *names))
    rates = (before.learning_rate, after.learning_rate)
    if None not in rates and not _same(*rates, rtol):
        found.append(Difference("learning_rate", *rates))
    for field in ("scale_before", "scale_after", "applied", "iterations"):
        a, b = getattr(before, field), getattr(after, field)
        if not _same(a, b, 0.0 if field in ("applied", "iterations") else rtol):
            found.append(Difference(field, a, b))
    # Each loss both runs scaled, in order (a run that scales none has none to compare).
    for number, (a, b) in enumerate(zip(before.losses, after.losses, strict=False)):
        if not _same(a, b, rtol):
            field = "loss" if number == 0 else f"loss {number + 1}"
            found.append(Difference(field, a, b))
    if len(before.digest) == len(after.digest):
        for (name, *a), (_, *b) in zip(before.digest, after.digest, strict=True):
            if not _same(a[0], b[0], rtol) or (rtol == 0 and a[1:] != b[1:]):
                found.append(Difference("digest", tuple(a), tuple(b), variable=name))
                break  # the first variable that differs says enough
    return tuple(found)


def compare(before: Trace, after: Trace, rtol: float = 0.0) -> Outcome:
    """The verdict on two traces of the same program (see the module's docstring)."""
    failed = [(side, t) for side, t in (("before", before), ("after", after)) if t.failed]
    if any(not t.steps for _, t in failed):
        return Outcome(FAILED, None, 0, _failed_first(failed))
    if not before.steps and not after.steps:
        return Outcome(
            FAILED,
            None,
            0,
            "no loss scale optimizer was ever stepped in either run: nothing to compare "
            "(does the program train with a LossScaleOptimizer, or under a mixed_float16 "
            "policy with compile()?)",
        )
    by_key = {s.key: s for s in after.steps}
    before_keys = set()
    for position, step in enumerate(before.steps, start=1):
        before_keys.add(step.key)
        other = by_key.get(step.key)
        found = (
            (Difference("missing", step.step, None),)
            if other is None
            else differences(step, other, rtol)
        )
        if found:
            divergence = Divergence(step.optimizer, step.step, position, step, other, found)
            return Outcome(DIVERGED, divergence, position - 1, _diverged(divergence, after))
    extra = [s for s in after.steps if s.key not in before_keys]
    if extra:
        step = extra[0]
        divergence = Divergence(
            step.optimizer,
            step.step,
            len(before.steps) + 1,
            None,
            step,
            (Difference("missing", None, step.step),),
        )
        return Outcome(DIVERGED, divergence, len(before.steps), _diverged(divergence, before))
    count = len(before.steps)
    if before.failed or after.failed:
        failing = [
            f"the {side} run {t.ended_how()}"
            for side, t in (("before", before), ("after", after))
            if t.failed
        ]
        return Outcome(
            FAILED,
            None,
            count,
            f"{count} steps equal, then {' and '.join(failing)}: the runs could not be "
            "compared further",
        )
    return Outcome(
        EQUAL, None, count, f"{count} steps equal ({_optimizers(before)}{_early(before)})"
    )


def compare_within(before: Trace, after: Trace, rtol: float) -> tuple[Outcome, float]:
    """`compare` bit for bit, and where that diverges and `rtol` > 0, within `rtol`: the outcome
    and the tolerance it holds at (0: bit for bit). Equal within `rtol` says how many steps were
    not equal bit for bit."""
    exact = compare(before, after, 0.0)
    if exact.status != DIVERGED or rtol <= 0:
        return exact, 0.0
    outcome = compare(before, after, rtol)
    if outcome.status == EQUAL:
        after_by_key = {s.key: s for s in after.steps}
        inexact = sum(1 for s in before.steps if differences(s, after_by_key[s.key]))
        message = f"{outcome.message}; {inexact} of them not bit for bit"
        outcome = dataclasses.replace(outcome, message=message)
    return outcome, rtol


def _failed_first(failed: list[tuple[str, Trace]]) -> str:
    """Which runs failed before their first step, both where both did (alike: said once)."""
    first = [(side, t.ended_how()) for side, t in failed if not t.steps]
    if len(first) == 2 and first[0][1] == first[1][1]:
        return f"both runs failed before their first step: each {first[0][1]}"
    said = [f"the {side} run failed before its first step: it {how}" for side, how in first]
    return " and ".join(said)


def _early(trace: Trace) -> str:
    """Where the program ended before the steps asked for: say so (the runs were shorter)."""
    asked = (trace.start or {}).get("steps")
    if trace.end is None or trace.end.get("event") != "exit" or not asked:
        return ""
    return f"; the program ended before {asked} steps"


def _optimizers(trace: Trace) -> str:
    n = trace.optimizers
    return "1 loss scale optimizer" if n == 1 else f"{n} loss scale optimizers"


def _diverged(divergence: Divergence, lacking: Trace) -> str:
    where = f"step {divergence.step} of loss scale optimizer {divergence.optimizer}"
    if divergence.before is None or divergence.after is None:
        side = "before" if divergence.before is None else "after"
        return f"diverged at {where}: the {side} run made no such step (it {lacking.ended_how()})"
    return f"diverged at {where}: {divergence.describe()}"


def _describe(difference: Difference) -> str:
    if difference.field == "digest":
        return (
            f"variable {difference.variable} differs after the update "
            f"(sum of squares, fingerprint: {_pair(difference.before)} before, "
            f"{_pair(difference.after)} after)"
        )
    if difference.field == "variables":
        return f"updated variables differ: {difference.before} before, {difference.after} after"
    if difference.field == "learning_rate":
        return f"learning rate {difference.before:.6g} before, {difference.after:.6g} after"
    if difference.field == "none_gradients":
        return (
            f"gradients None: {difference.before} before, {difference.after} after (a "
            "variable with none is not updated)"
        )
    return f"{difference.field} {difference.before!r} before, {difference.after!r} after"


def _pair(values: Any) -> str:
    return ", ".join(repr(v) for v in values)
