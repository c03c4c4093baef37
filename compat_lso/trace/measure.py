"""What one step records, as tensors, and how the values reach the trace file.

Read before the optimizer's step: the loss scale and whether the step applies (every gradient
finite, over all replicas; always with a fixed scale). Read after it: the scale, `iterations`
and the digest (float64 sum and sum of squares of each variable the step updated). Automatic
control dependencies keep the reads in program order around the step's updates inside a
`tf.function`, as they do eagerly. Inside a graph the values leave it through one
`tf.numpy_function` per step (no XLA: a `jit_compile=True` step cannot hold it), eagerly they
are read at once.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from compat_lso import audit
from compat_lso.trace.recorder import OptimizerState, Recorder


def scale(optimizer: Any, state: OptimizerState) -> tf.Tensor:
    """The current loss scale, float64."""
    if state.generation == "keras2":
        return tf.cast(optimizer.loss_scale, tf.float64)  # a constant for dynamic=False
    # Keras 3's class has no fixed scale; compat_lso's keeps one (`_dynamic`) at initial_scale.
    dynamic_scale = vars(optimizer).get("dynamic_scale")
    variable = dynamic_scale if getattr(optimizer, "_dynamic", True) else None
    if variable is None:  # fixed, or Keras 3's own class before its first step builds it
        return tf.constant(float(optimizer.initial_scale), tf.float64)
    return tf.cast(_read(variable), tf.float64)


def dynamic(optimizer: Any, state: OptimizerState) -> bool:
    if state.generation == "keras2":
        return bool(optimizer.dynamic)
    return bool(getattr(optimizer, "_dynamic", True))


def applies(optimizer: Any, state: OptimizerState, grads: Sequence[Any]) -> tf.Tensor:
    """Whether the step will apply: a dynamic scale skips a step with an inf or nan gradient in
    any replica; a fixed one applies every step."""
    if not dynamic(optimizer, state):
        return tf.constant(True)
    checks = [
        tf.reduce_all(tf.math.is_finite(g.values if isinstance(g, tf.IndexedSlices) else g))
        for g in grads
    ]
    finite = tf.reduce_all(tf.stack(checks)) if checks else tf.constant(True)
    context = tf.distribute.get_replica_context()
    if context is not None and context.num_replicas_in_sync > 1:
        nonfinite = context.all_reduce(
            tf.distribute.ReduceOp.SUM, tf.cast(tf.logical_not(finite), tf.float32)
        )
        finite = tf.equal(nonfinite, 0.0)
    return finite


def loss_value(loss: Any) -> tf.Tensor | None:
    """The loss the code scaled through the optimizer, float64 (summed if not a scalar); None if
    it was made in another graph than this step's (a loss from an earlier trace)."""
    if loss is None:
        return None
    if not tf.inside_function():
        return None if not hasattr(loss, "numpy") else tf.reduce_sum(tf.cast(loss, tf.float64))
    made_in = getattr(loss, "graph", None)  # an eager tensor has none
    graph = tf.compat.v1.get_default_graph()
    while graph is not None and graph is not made_in:  # this step's graph, or one it captures
        graph = getattr(graph, "outer_graph", None)
    if graph is None:
        return None
    return tf.reduce_sum(tf.cast(loss, tf.float64))


def digest(variables: Sequence[Any]) -> tf.Tensor:
    """[[sum, sum of squares], ...] in float64, one row per variable."""
    rows = []
    for variable in variables:
        value = tf.cast(_read(variable), tf.float64)
        rows.append(tf.stack([tf.reduce_sum(value), tf.reduce_sum(tf.square(value))]))
    return tf.stack(rows) if rows else tf.zeros([0, 2], tf.float64)


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
    standard library (tracing a function: AutoGraph's code mapped back, as audit.py does)."""
    if tf.inside_function():
        file, line = audit.user_site()
        return f"{file}:{line}"
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if not audit._is_library(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>:0"


def emit(
    recorder: Recorder,
    state: OptimizerState,
    site: str,
    names: list[str],
    inputs: list[tf.Tensor],
) -> None:
    """Send [scale_before, applied, scale_after, iterations, digest, (loss)] to the recorder:
    now (eagerly) or each time the graph runs."""

    def record(*values: Any) -> np.ndarray:
        scale_before, applied, scale_after, iterations, sums = values[:5]
        loss = float(values[5]) if len(values) > 5 else None
        recorder.step(
            state,
            site,
            {
                "scale_before": float(scale_before),
                "scale_after": float(scale_after),
                "applied": bool(applied),
                "iterations": int(iterations),
                "loss": loss,
                "digest": [
                    [n, float(row[0]), float(row[1])]
                    for n, row in zip(names, np.asarray(sums), strict=True)
                ],
            },
        )
        return np.zeros((), np.bool_)

    if tf.executing_eagerly():
        record(*(t.numpy() for t in inputs))
    else:
        tf.numpy_function(record, inputs, Tout=tf.bool, stateful=True, name="compat_lso_trace")
