"""What one step records, as tensors, and how the values reach the trace file.

Read before the optimizer's step: the loss scale. Read after it: the scale, the dynamic
scale's counter (whether the step applied comes from them: what the optimizer did, not what the
gradients say it should have), `iterations` and the digest of each variable the step updated
(sum of squares and a 64-bit fingerprint of its bytes: `digest`). Automatic control
dependencies keep the reads in program order around the step's updates inside a `tf.function`,
as they do eagerly. Inside a graph the values leave it as they are (no operation packs them)
through one `tf.numpy_function` per step (no XLA: a `jit_compile=True` step cannot hold it),
eagerly they are read at once.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from compat_lso.audit import site as user_code
from compat_lso.trace.recorder import OptimizerState, Recorder


def scale(optimizer: Any, state: OptimizerState) -> tf.Tensor:
    """The current loss scale: float64, or the variable as it is (its float32 is exact as a
    Python float: no Cast in the step)."""
    if state.generation == "factor":  # a plain Keras 3 optimizer's fixed loss_scale_factor
        return tf.constant(float(optimizer.loss_scale_factor), tf.float64)
    if state.generation == "keras2":
        return tf.convert_to_tensor(optimizer.loss_scale)  # float32; a constant for dynamic=False
    # Keras 3's class has no fixed scale; compat_lso's keeps one (`_dynamic`) at initial_scale.
    dynamic_scale = vars(optimizer).get("dynamic_scale")
    variable = dynamic_scale if getattr(optimizer, "_dynamic", True) else None
    if variable is None:  # fixed, or Keras 3's own class before its first step builds it
        return tf.constant(float(optimizer.initial_scale), tf.float64)
    return _read(variable)


def counter(optimizer: Any, state: OptimizerState) -> tf.Tensor:
    """The dynamic scale's count of good steps since it last changed; -1 with a fixed scale
    (which applies every step, as does a plain optimizer's loss_scale_factor)."""
    if state.generation == "factor":
        return tf.constant(-1, tf.int64)
    if state.generation == "keras2":
        variable = optimizer.dynamic_counter if optimizer.dynamic else None
    else:
        dynamic = getattr(optimizer, "_dynamic", True)
        variable = vars(optimizer).get("step_counter") if dynamic else None
    if variable is None:
        return tf.constant(-1, tf.int64)
    return _read(variable)


def applied(scale_before: float, scale_after: float, counter_after: int) -> bool:
    """Whether the optimizer applied the step, from its own scale and counter (both rules: a
    skipped step restarts the count and halves the scale, Keras 2's never below 1; an applied
    one counts, or restarts the count and doubles the scale, Keras 2's not to inf)."""
    if counter_after != 0:  # counted (or fixed: -1)
        return True
    return scale_after > scale_before or scale_after == scale_before > 1.0


def constant(loss: Any) -> bool:
    """A number handed to `scale_loss`, not a loss: a Python or NumPy number, or inside a graph
    a tensor TensorFlow folds to a constant. (`--target keras3` writes `opt.scale_loss(1.0)` to
    take Keras 3's division back: the scale, not a loss.) An eager tensor is a loss."""
    if isinstance(loss, bool | int | float | np.number | np.ndarray):
        return True
    if hasattr(loss, "numpy"):  # an eager tensor, a variable: a value of this run
        return False
    try:
        return tf.get_static_value(loss) is not None
    except Exception:  # not a tensor TensorFlow can read statically: a loss
        return False


def loss_value(loss: Any) -> tf.Tensor | None:
    """The loss the code scaled through the optimizer: a float32 or float64 scalar as it is, else
    summed in float64; None if it was made in another graph than this step's (a loss from an
    earlier trace)."""
    if loss is None or not _in_this_step(loss):
        return None
    return _number(loss)


def _in_this_step(value: Any) -> bool:
    """A tensor this step can read: eagerly an eager one; in a graph, one of this step's graph
    or of a graph it captures from (not one left by an earlier trace)."""
    if not tf.inside_function():
        return hasattr(value, "numpy")
    made_in = getattr(value, "graph", None)  # an eager tensor has none
    graph = tf.compat.v1.get_default_graph()
    while graph is not None and graph is not made_in:  # this step's graph, or one it captures
        graph = getattr(graph, "outer_graph", None)
    return graph is not None


def learning_rate(optimizer: Any, state: OptimizerState) -> tf.Tensor | None:
    """The learning rate the step is about to use, read before it (at `iterations` before the
    step, as the step reads it); None where it cannot be read (an optimizer of the user's own
    with no learning rate of Keras's kind). Of the inner optimizer of a loss scale optimizer."""
    try:
        inner = optimizer if state.generation == "factor" else optimizer.inner_optimizer
        if state.generation != "keras2":
            rate = inner.learning_rate  # Keras 3: the schedule at `iterations`, what apply reads
        elif hasattr(inner, "_decayed_lr"):
            # Keras 2's OptimizerV2 (`tf.keras.optimizers.legacy`, and every Keras optimizer of
            # TF <= 2.10) reads its rate through `_decayed_lr` (a subclass's override too, which
            # Keras 3 never calls): what its update uses. Its variables made first as its
            # apply_gradients makes them (outside any function and replica), which reading
            # them inside a strategy's replica would otherwise do there.
            with tf.init_scope():
                inner._create_hypers()
                inner.iterations  # noqa: B018 (made when first read)
            rate = inner._decayed_lr(tf.float32)
        else:
            # Keras 2's optimizer of TF 2.11+ evaluates its schedule at `iterations` when the
            # step starts (`_compute_current_learning_rate`), else reads its variable.
            rate = inner._learning_rate
            if callable(rate) and not isinstance(rate, tf.Variable):
                rate = rate(inner.iterations)
        value = tf.convert_to_tensor(rate)
    except Exception:  # an optimizer of the user's own: no learning rate to show
        return None
    return value if value.dtype.is_floating and value.shape.rank == 0 else None


def audit_checks(records: list[tuple[str, str, int, Any]]) -> list[tuple[list[str], tf.Tensor]]:
    """The audit's records of this step (`audit.step_records()`: kind, file, line, condition),
    each as [kind, "file:line"] and whether it occurred (a bool tensor: in a graph the audit's
    condition, read as the step runs)."""
    checks = []
    for kind, file, line, condition in records:
        tensor = condition is not None and not isinstance(condition, bool)
        if tensor and not _in_this_step(condition):
            continue  # made by an earlier trace of another graph: not this step's
        occurred = tf.constant(True) if condition is None else tf.cast(condition, tf.bool)
        checks.append(([kind, f"{file}:{line}"], occurred))
    return checks


def _number(loss: Any) -> tf.Tensor:
    loss = tf.convert_to_tensor(loss)
    if loss.shape.rank == 0 and loss.dtype in (tf.float32, tf.float64):
        return loss  # no operation: a Python float holds it exactly
    return tf.reduce_sum(tf.cast(loss, tf.float64))


def digest(variables: Sequence[Any]) -> tuple[tf.Tensor, tf.Tensor]:
    """Two tensors: half the sum of squares of each variable, [q1, ..., qN] (float32 if every
    variable is float32, else float64), and each one's fingerprint, uint8 [N, 8].

    The fingerprint (`tf.fingerprint`: farmhash64 of the value's bytes) is what makes two steps
    equal bit for bit: a change to any element (one ulp too) changes it, but for a 2**-64
    chance. The sum of squares is for people and `--rtol`, accumulated in the variable's own
    type (float32 stays float32, float64 float64, others in float64): one pass over the value,
    no copy. (A float64 copy of every weight made the trace cost 1.13x a step, and a signed sum
    beside it another pass: issue 31. A signed sum near 0 is no measure for a relative
    tolerance either.) Half: `l2_loss`, one pass where `reduce_sum(square(x))` is two; `emit`
    doubles it, exactly. Few operations: nothing is cast, cut up or put together beyond one
    stack and one concat (each operation costs a step some microseconds however small its
    work: issue 31).
    """
    if not variables:
        return tf.zeros([0], tf.float32), tf.zeros([0, 8], tf.uint8)
    squares, fingerprints = [], []
    for variable in variables:
        value = _read(variable)
        wide = value if value.dtype in (tf.float32, tf.float64) else tf.cast(value, tf.float64)
        squares.append(tf.nn.l2_loss(wide))
        fingerprints.append(tf.fingerprint(tf.reshape(value, [1, -1])))  # uint8 [1, 8]
    if len({q.dtype for q in squares}) > 1:
        squares = [tf.cast(q, tf.float64) for q in squares]
    return tf.stack(squares), tf.concat(fingerprints, 0)


def name(variable: Any) -> str:
    return str(getattr(variable, "path", None) or variable.name)  # Keras 3: "dense/kernel"


def _read(variable: Any) -> tf.Tensor:
    # A Keras 3 variable holds a tf.Variable in `.value` on the TensorFlow backend.
    return tf.convert_to_tensor(variable)


def first_replica() -> bool:
    """True except in a replica other than the first of a tf.distribute strategy: each step is
    recorded once, by the first replica, after every replica's update."""
    context = tf.distribute.get_replica_context()
    if context is None:
        return True
    replica = context.replica_id_in_sync_group
    value = replica if isinstance(replica, int) else tf.get_static_value(replica)
    return value is None or int(value) == 0


def where() -> str:
    """The user's line: the innermost frame outside TensorFlow, Keras, compat_lso and the
    standard library (tracing a function: AutoGraph's code mapped back, as the audit does)."""
    if tf.inside_function():
        file, line = user_code.user_site()
        return f"{file}:{line}"
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if not user_code.is_library(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>:0"


@dataclasses.dataclass
class StepValues:
    """What a step sends to the trace file, as tensors (read before and after the step)."""

    scale_before: tf.Tensor
    scale_after: tf.Tensor
    counter: tf.Tensor
    iterations: Any
    learning_rate: tf.Tensor | None
    losses: list[tf.Tensor]
    checks: list[tf.Tensor]  # bool: whether each of the audit's records of the step occurred

    def tensors(self) -> list[tf.Tensor]:
        found = [self.scale_before, self.scale_after, self.counter, self.iterations]
        found += [] if self.learning_rate is None else [self.learning_rate]
        found += self.losses
        found += [tf.stack(self.checks)] if self.checks else []
        return [tf.convert_to_tensor(v) for v in found]


def emit(
    recorder: Recorder,
    state: OptimizerState,
    site: str,
    about: dict[str, Any],
    values: StepValues,
    *,
    digest: tuple[tf.Tensor, tf.Tensor],
) -> None:
    """Send `values` and `digest`'s two tensors to the recorder: now (eagerly) or each time the
    graph runs, through one `tf.numpy_function` that takes them as they are (no operation packs
    them). `about`: what is known when the step is traced (the variables' names, the count of
    gradients and of None ones, where the optimizer was made, the audit's records)."""
    names = about.pop("names")
    has_rate, count = values.learning_rate is not None, len(values.losses)
    audit_records = about.pop("audit", None)

    def record(*arrays: np.ndarray) -> np.ndarray:
        *numbers, squares, fingerprints = arrays
        scale_before, scale_after = float(numbers[0]), float(numbers[1])
        rate = float(numbers[4]) if has_rate else None
        losses = [float(x) for x in numbers[4 + has_rate : 4 + has_rate + count]]
        halves = squares.tolist()  # float32 and float64 to Python floats, exactly
        hexes = fingerprints.tobytes().hex()  # the fingerprints' bytes in their order
        line: dict[str, Any] = {
            "created": about["created"],
            "scale_before": scale_before,
            "scale_after": scale_after,
            "applied": applied(scale_before, scale_after, int(numbers[2])),
            "iterations": int(numbers[3]),
            "loss": losses[0] if losses else None,
            "losses": losses,
            "learning_rate": rate,
            "gradients": about["gradients"],
            "none_gradients": about["none_gradients"],
            "digest": [
                [name, 2.0 * halves[i], hexes[16 * i : 16 * i + 16]] for i, name in enumerate(names)
            ],
        }
        if audit_records is not None:
            occurred = numbers[-1].tolist() if audit_records else []
            line["audit"] = sorted(
                {tuple(r) for r, yes in zip(audit_records, occurred, strict=True) if yes}
            )
        recorder.step(state, site, line)
        return np.zeros((), np.bool_)

    inputs = [*values.tensors(), *digest]
    if tf.executing_eagerly():
        record(*(np.asarray(v) for v in inputs))
    else:
        tf.numpy_function(record, inputs, Tout=tf.bool, stateful=True, name="compat_lso_trace")
