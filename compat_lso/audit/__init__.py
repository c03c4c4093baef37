"""Runtime audit: where Keras 3's own LossScaleOptimizer would have trained differently.

`python -m compat_lso run --audit SCRIPT` (or `compat_lso.install(audit=True)`) runs the program
as usual, through the shim, and records at the user's own file:line every place where Keras 3's
native class would have given different training than the code meant (Keras 2's meaning, which
the shim keeps). At exit it prints a summary to stderr (`--audit-json FILE`: also as JSON).
It is the dynamic check beside the codemod's static one: one real run validates a migration.

What is recorded (`KINDS`), each with a count of occurrences:

- at `apply_gradients`: gradients of a loss that was never scaled (Keras 3 divides them by the
  scale), gradients unscaled without a scaled loss, a scaled loss never unscaled;
- at construction: fixed scaling (`dynamic=False`), which Keras 3 lacks;
- at the step (`apply_gradients`, or the `Model.fit` that traced it): a step skipped for
  inf/nan gradients (Keras 3 would not count it in `iterations`), the scale held at Keras 2's
  floor of 1 (Keras 3 halves below 1), and a doubling refused because it would overflow to inf
  (Keras 3 doubles to inf, and every later step is skipped);
- Keras 2 forms that Keras 3's class lacks (`get_scaled_loss`, `get_unscaled_gradients`,
  `loss_scale`, `dynamic_counter`, `minimize`, `variables()`) or accepts with another meaning,
  without raising (`lr`, the settings Keras 2 delegated to the inner optimizer such as
  `clipnorm`, `set_weights()`, `opt.momentum = ...`): see `compat_lso.core.keras2_forms`. Any other
  module may call `record("keras2-form", "name")` (the public hook).

A run with no step of a loss scale optimizer (a crash before the first) says that nothing was
trained, not that nothing would differ.

Cost. Off, nothing: the audit replaces methods of the shim's Keras 3 class only while enabled,
so no call, check or operation is added otherwise. On: inside `tf.function` the records are
made in Python at trace time; each step then adds one scatter-add per record point to a
counter vector (made at the first such record), and the update rule's conditions are computed
from the values the step already reads. Eagerly the counts are Python integers. Under a
`tf.distribute` strategy a record made in each replica's step is counted once per replica.

On Keras 2 backends (TF <= 2.15, tf_keras) Keras 2's own class runs and is the meaning: the
summary says so, and that this run cannot show what Keras 3 would change. One thing is recorded
there too, the old code's own bug: gradients of a loss never scaled, divided by the scale
(`unscaled-twice`, from a hook on Keras 2's `apply_gradients` while the audit is on).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

from compat_lso.audit.kinds import KINDS, STEP_KINDS
from compat_lso.audit.site import accessing_site, user_site
from compat_lso.core.keras2_forms import FACTS, KERAS2_FORMS

# Counts of records made inside tf.function live in one float32 vector (exact to 2**24 steps),
# made at the first record in a graph (see `_Audit._counter_vector`).
_CAPACITY = 1024
# Not a finding: each apply_gradients of a LossScaleOptimizer, so that the summary can tell a run
# that trained cleanly from one that ended before its first step.
_STEP = "step"


@dataclasses.dataclass
class Record:
    kind: str
    subject: str | None
    file: str
    line: int
    message: str
    count: int = 0  # eager occurrences
    slot: int | None = None  # its element of the counter vector, once counted in a graph
    steps_uncounted: bool = False  # made in a graph after the vector was full: traces counted

    def total(self, counters: Any) -> int:
        in_graphs = 0 if self.slot is None or counters is None else int(counters[self.slot])
        return self.count + in_graphs

    def as_dict(self, counters: Any) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "subject": self.subject,
            "file": self.file,
            "line": self.line,
            "message": self.message,
            "count": self.total(counters),
        }


class _Audit:
    def __init__(self, json_path: str | None) -> None:
        from compat_lso import _backend

        self.json_path = json_path
        self.keras_3 = _backend.keras_version() >= _backend.KERAS_3
        self.keras = f"{_backend.keras_package().__name__} {_backend.keras_version()}"
        self.records: dict[tuple[str, str | None, str, int], Record] = {}
        self.lock = threading.Lock()
        self.local = threading.local()
        self.counters: Any = None
        self.next_slot = 0
        self.undo: list[Any] = []
        self.finished = False

    def record(self, kind: str, subject: str | None, condition: Any = None) -> None:
        """One occurrence at the user's line; `condition` (a bool tensor): only where true."""
        if kind == "keras2-form" and self.local.__dict__.get("inside", 0):
            return  # a Keras 2 form the shim calls itself (minimize's get_scaled_loss)
        self.record_all([(kind, subject, condition)])

    def record_access(self, subject: str) -> None:
        """A Keras 2 form, recorded only where the user's own code wrote it: Keras reads and
        writes some of the same names itself (an .h5 load's set_weights, a callback's use_ema)."""
        site = None if self.local.__dict__.get("inside", 0) else accessing_site()
        if site is not None:
            self.record_all([("keras2-form", subject, None)], site)

    def record_all(
        self, entries: list[tuple[str, str | None, Any]], site: tuple[str, int] | None = None
    ) -> None:
        """Several kinds at one user line, counted in a graph by one scatter-add."""
        import tensorflow as tf

        file, line = site or user_site()
        eager = tf.executing_eagerly()
        if _per_step:  # the trace reads them after the step (`step_records`)
            pending = self.local.__dict__.setdefault("step_records", [])
            pending += [(k, file, line, c) for k, _, c in entries if k in STEP_KINDS]
        slots, increments = [], []
        with self.lock:
            for kind, subject, condition in entries:
                key = (kind, subject, file, line)
                found = self.records.get(key)
                if found is None:
                    found = Record(kind, subject, file, line, message(kind, subject))
                    self.records[key] = found
                if eager:
                    found.count += 1 if condition is None else int(bool(condition))
                    continue
                if found.slot is None and self.next_slot < _CAPACITY:
                    found.slot, self.next_slot = self.next_slot, self.next_slot + 1
                if found.slot is None:  # the vector is full: count traces, say so
                    found.steps_uncounted = True
                    found.count += 1
                    continue
                slots.append(found.slot)
                increments.append(True if condition is None else condition)
        if slots:
            values = tf.cast(tf.stack(increments), tf.float32)
            self._counter_vector().scatter_add(tf.IndexedSlices(values, tf.constant(slots)))

    def count_step(self) -> None:
        """One apply_gradients of a loss scale optimizer (a step, run or traced to run)."""
        self.record_all([(_STEP, None, None)], ("<steps>", 0))

    def steps(self) -> int:
        counters = None if self.counters is None else self.counters.numpy()
        with self.lock:
            found = self.records.get((_STEP, None, "<steps>", 0))
            return 0 if found is None else found.total(counters)

    def _counter_vector(self) -> Any:
        """Made at the first record in a graph, not when the audit starts: a variable made then
        would start TensorFlow's runtime before the program configures its devices."""
        with self.lock:
            if self.counters is None:
                # In a thread of its own: a plain eager variable, whatever the caller is in (a
                # function's later trace, which may not make variables; a strategy's scope,
                # which would mirror it, and a mirrored variable refuses a replica's update).
                # Never reached while `tensorflow` is being imported (install() does not record),
                # where the thread would wait on the import lock.
                maker = threading.Thread(target=self._make_counter_vector)
                maker.start()
                maker.join()
            return self.counters

    def _make_counter_vector(self) -> None:
        import tensorflow as tf

        self.counters = tf.Variable(tf.zeros([_CAPACITY]), trainable=False, name="audit_counts")

    @contextlib.contextmanager
    def shim_internal(self) -> Iterator[None]:
        self.local.inside = getattr(self.local, "inside", 0) + 1
        try:
            yield
        finally:
            self.local.inside -= 1

    def results(self) -> list[dict[str, Any]]:
        counters = None if self.counters is None else self.counters.numpy()
        with self.lock:
            found = [r.as_dict(counters) for r in self.records.values()]
        found = [r for r in found if r["count"] and r["kind"] != _STEP]
        return sorted(found, key=lambda r: (r["file"], r["line"]))


_lock = threading.Lock()
_requested: dict[str, Any] = {}


class _State:
    active: _Audit | None = None  # the running audit, else None


_state = _State()


def request(json_path: str | None = None) -> None:
    """Ask for the audit without importing TensorFlow (`run --audit`); install() starts it."""
    _requested["json_path"] = json_path


def requested() -> bool:
    return bool(_requested)


def is_enabled() -> bool:
    return _state.active is not None


def enable(json_path: str | None = None) -> None:
    """Start the audit (idempotent): on Keras 3, the shim's class records from now on."""
    with _lock:
        if _state.active is not None:
            return
        audit = _Audit(json_path or _requested.get("json_path"))
        from compat_lso.audit import hooks as _audit_hooks

        # Keras 2: its own class runs; only the old code's own bug is recorded (unscaled-twice).
        install = _audit_hooks.install if audit.keras_3 else _audit_hooks.install_keras2
        audit.undo = install(audit)
        _state.active = audit
        atexit.register(finish)


def disable() -> None:
    """Stop recording and put the shim's class back as it was; the records are dropped."""
    with _lock:
        if _state.active is None:
            return
        while _state.active.undo:
            _state.active.undo.pop()()
        atexit.unregister(finish)
        _state.active = None


_per_step: list[bool] = []  # [True] once the trace asked for each step's records


def collect_per_step() -> None:
    """Keep the records of each step (STEP_KINDS) for `step_records()`: the trace asks for them
    after each step, so that `verify` can match a step to what the audit recorded at it."""
    if not _per_step:
        _per_step.append(True)


def step_records() -> list[tuple[str, str, int, Any]] | None:
    """The records of STEP_KINDS made in this thread since the last call, in order: (kind,
    file, line, condition: None, a bool, or a bool tensor, inside a graph, of whether it
    occurred when the step runs). None while no audit runs."""
    audit = _state.active
    if audit is None:
        return None
    records: list[tuple[str, str, int, Any]] = audit.local.__dict__.pop("step_records", [])
    return records


def record(kind: str, subject: str | None = None) -> None:
    """The hook for other modules: one occurrence of `kind` at the user's current line.

    E.g. `audit.record("keras2-form", "variables()")` where a Keras 2 form is served. Does
    nothing unless the audit is on.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, but got: {kind!r}")
    audit = _state.active
    if audit is not None and audit.keras_3:
        audit.record(kind, subject)


def records() -> list[dict[str, Any]]:
    """What the audit found so far: one dict per place (kind, subject, file, line, message,
    count), only places that occurred (count > 0)."""
    return [] if _state.active is None else _state.active.results()


def summary() -> str:
    audit = _state.active
    if audit is None:
        return "compat_lso audit: not enabled"
    found = audit.results()
    untrained = [] if audit.steps() else [_UNTRAINED]  # a crash before the first step
    if not audit.keras_3:
        lines = [
            f"compat_lso audit: this run was on Keras 2 ({audit.keras}): Keras 2's own "
            "LossScaleOptimizer ran (compat_lso replaces nothing there), so nothing of Keras "
            "3's class was audited; run again on TensorFlow 2.16+ (Keras 3) to see where it "
            "would differ. Checked here: gradients of a loss never scaled, divided by the "
            + ("scale: none." if not found else f"scale: {len(found)} place(s):")
        ]
        return "\n".join(lines + [_line(r) for r in found] + untrained)
    if not found and untrained:
        return f"compat_lso audit ({audit.keras}): nothing to compare.\n" + untrained[0]
    if not found:
        return (
            f"compat_lso audit ({audit.keras}): no place in this run where Keras 3's own "
            "LossScaleOptimizer would have trained differently."
        )
    lines = [
        f"compat_lso audit ({audit.keras}): {len(found)} place(s) where Keras 3's own "
        "LossScaleOptimizer would have trained differently from this run:"
    ]
    return "\n".join(lines + [_line(r) for r in found] + untrained)


_UNTRAINED = (
    "  no LossScaleOptimizer step ran in this run (it ended before the first apply_gradients, "
    "or used none): nothing was trained, so no step was audited."
)


def _line(r: dict[str, Any]) -> str:
    return f"  {_relative(r['file'])}:{r['line']}: {r['kind']} (x{r['count']}): {r['message']}"


def finish() -> None:
    """Print the summary to stderr and write the JSON file, once (at exit, or after `run`)."""
    audit = _state.active
    if audit is None and requested():
        print("compat_lso audit: the program never imported TensorFlow", file=sys.stderr)
    if audit is None or audit.finished:
        return
    audit.finished = True
    print(summary(), file=sys.stderr)
    if audit.json_path:
        document = {
            "keras": audit.keras,
            "keras_3": audit.keras_3,
            "steps": audit.steps(),
            "records": records(),
        }
        with open(audit.json_path, "w", encoding="utf-8") as file:
            json.dump(document, file, indent=2)
            file.write("\n")


def message(kind: str, subject: str | None) -> str:
    if kind != "keras2-form":
        return KINDS.get(kind, "")  # _STEP: no message
    fact = FACTS.get(subject or "") or KINDS[kind].format(subject=f"`{subject}`")
    fix = KERAS2_FORMS.get(subject or "", "see docs/old-code.md for its Keras 3 spelling")
    return f"{fact}; fix: {fix}"


def _relative(path: str) -> str:
    with contextlib.suppress(ValueError):
        relative = os.path.relpath(path)
        if not relative.startswith(".."):
            return relative
    return path
