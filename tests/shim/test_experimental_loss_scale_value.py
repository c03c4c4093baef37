"""The experimental class's `loss_scale`: read as TF 2.4's float32 tensor, called as TF 2.2's.

Each way old code read `opt.loss_scale` (TF 2.4 returned a tensor, TF 2.2 a `LossScale` that
was called) gives the current scale, compared with the non-experimental class's tensor.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tensorflow as tf

from compat_lso import experimental
from tests.shim.backend import IS_KERAS_2


def _optimizer(loss_scale=8):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), loss_scale)


def _number(value):
    """`value` as a float, if it is a number (what `get_value` gives for a tensor)."""
    assert isinstance(value, (np.ndarray, np.generic, float)), type(value)
    return float(value)


READS = {
    "called (TF 2.2)": lambda value: float(value()),
    "tf.keras.backend.get_value": lambda value: _number(tf.keras.backend.get_value(value)),
    "tf.convert_to_tensor": lambda value: float(tf.convert_to_tensor(value)),
    "float": float,
    "numpy": lambda value: float(value.numpy()),
    "np.asarray": lambda value: float(np.asarray(value)),
    "format spec": lambda value: float(f"{value:.1f}"),
    "str": lambda value: float(str(value).split("(")[1].split(",")[0]),
    "tf.cast": lambda value: float(tf.cast(value, tf.float16)),
    "arithmetic": lambda value: float(value * 1.0),
}


@pytest.mark.parametrize("read", list(READS.values()), ids=list(READS))
def test_each_way_of_reading_it_gives_the_scale(read):
    assert read(_optimizer(8).loss_scale) == 8.0


def test_it_is_read_when_used_so_a_kept_value_follows_the_scale():
    optimizer = _optimizer("dynamic")
    kept = optimizer.loss_scale
    var = tf.Variable(1.0)
    optimizer.apply_gradients([(tf.constant(np.inf), var)])  # skipped: the scale halves
    assert float(kept) == float(tf.keras.backend.get_value(kept)) == 2.0**14
    assert tf.is_tensor(kept) and kept.dtype == tf.float32 and kept.shape == []


def test_a_tf1_session_runs_it():
    with tf.Graph().as_default():
        optimizer = _optimizer(8)
        value = optimizer.loss_scale
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            assert session.run(value) == 8.0
            if IS_KERAS_2:  # Keras 3's get_value reads no TF1 graph tensor at all
                assert tf.keras.backend.get_value(value) == 8.0


def test_inside_tf_function_it_is_the_current_scale():
    optimizer = _optimizer("dynamic")

    @tf.function
    def scaled(x):
        return x * optimizer.loss_scale, optimizer.loss_scale() * 1.0

    assert [float(t) for t in scaled(tf.constant(2.0))] == [2.0**16, 2.0**15]
