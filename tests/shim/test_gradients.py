"""Gradient forms the optimizer must handle, and skipped steps that must touch nothing.

None entries, IndexedSlices (embedding lookups), float16 and mixed-dtype variables; in dynamic
mode a non-finite gradient skips the step: weights and optimizer slots stay bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from tests.shim.backend import HAS_LEGACY_OPTIMIZERS


def _inner_optimizers():
    yield "sgd-momentum", lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9)
    yield "adam", lambda: tf.keras.optimizers.Adam(0.1)
    if HAS_LEGACY_OPTIMIZERS:
        yield "legacy-adam", lambda: tf.keras.optimizers.legacy.Adam(0.1)


INNER = dict(_inner_optimizers())


def _optimizer_variables(optimizer) -> list:
    variables = optimizer.inner_optimizer.variables
    variables = variables() if callable(variables) else variables  # legacy OptimizerV2: a method
    return [v for v in variables if "iter" not in v.name]


def _snapshot(variables) -> list[np.ndarray]:
    return [np.array(v.numpy(), copy=True) for v in variables]


@pytest.mark.parametrize("inner", list(INNER))
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan], ids=["inf", "-inf", "nan"])
def test_skipped_step_leaves_weights_and_slots_untouched(inner, bad):
    weights = [tf.Variable([1.0, 2.0]), tf.Variable([[3.0]])]
    optimizer = compat_lso.LossScaleOptimizer(INNER[inner](), initial_scale=8)
    optimizer.apply_gradients(
        zip([tf.constant([0.5, 0.5]), tf.constant([[0.5]])], weights, strict=True)
    )
    slots = _optimizer_variables(optimizer)
    assert slots, "the inner optimizer should have slots after one step"
    before_weights, before_slots = _snapshot(weights), _snapshot(slots)

    optimizer.apply_gradients(
        zip([tf.constant([0.5, bad]), tf.constant([[0.5]])], weights, strict=True)
    )

    for after, before in zip(_snapshot(weights), before_weights, strict=True):
        np.testing.assert_array_equal(after, before)
    for after, before in zip(_snapshot(slots), before_slots, strict=True):
        np.testing.assert_array_equal(after, before)
    assert float(optimizer.loss_scale) == 4.0
    assert int(optimizer.iterations.numpy()) == 2


@pytest.mark.parametrize("inner", list(INNER))
def test_none_gradients_are_passed_over(inner):
    used, unused = tf.Variable([1.0]), tf.Variable([5.0])
    optimizer = compat_lso.LossScaleOptimizer(
        INNER[inner](), initial_scale=8, dynamic_growth_steps=1
    )
    assert optimizer.get_unscaled_gradients([tf.constant([16.0]), None])[1] is None
    optimizer.apply_gradients([(tf.constant([1.0]), used), (None, unused)])
    assert float(unused.numpy()[0]) == 5.0
    assert float(used.numpy()[0]) < 1.0
    # None does not count as non-finite: the step counted as good and the scale grew.
    assert float(optimizer.loss_scale) == 16.0


def test_indexed_slices_from_an_embedding_are_scaled_applied_and_checked():
    embedding = tf.Variable(tf.ones((10, 4)))
    optimizer = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), initial_scale=4)

    def gradient(rows):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.embedding_lookup(embedding, rows))
            scaled = optimizer.get_scaled_loss(loss)
        (grad,) = optimizer.get_unscaled_gradients(tape.gradient(scaled, [embedding]))
        return grad

    grad = gradient(tf.constant([1, 3]))
    assert isinstance(grad, tf.IndexedSlices)
    np.testing.assert_array_equal(grad.values.numpy(), np.ones((2, 4)))
    optimizer.apply_gradients([(grad, embedding)])
    np.testing.assert_array_equal(embedding.numpy()[[1, 3]], np.zeros((2, 4)))
    np.testing.assert_array_equal(embedding.numpy()[0], np.ones(4))

    bad = tf.IndexedSlices(tf.constant([[np.nan] * 4]), tf.constant([2]), tf.constant([10, 4]))
    optimizer.apply_gradients([(bad, embedding)])
    np.testing.assert_array_equal(embedding.numpy()[2], np.ones(4))
    assert float(optimizer.loss_scale) == 2.0


def test_float16_and_float32_variables_in_one_step():
    half, full = tf.Variable([1.0], dtype=tf.float16), tf.Variable([1.0], dtype=tf.float32)
    optimizer = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5), initial_scale=2)
    with tf.GradientTape() as tape:
        loss = tf.cast(half * 2.0, tf.float32) + full * 4.0
        scaled = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, [half, full]))
    assert [g.dtype for g in grads] == [tf.float16, tf.float32]
    optimizer.apply_gradients(zip(grads, [half, full], strict=True))
    assert float(half.numpy()[0]) == 0.0
    assert float(full.numpy()[0]) == -1.0


def test_float16_overflow_in_a_gradient_skips_the_step():
    half = tf.Variable([1.0], dtype=tf.float16)
    optimizer = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5), initial_scale=2**15)
    with tf.GradientTape() as tape:
        scaled = optimizer.get_scaled_loss(half * tf.constant(60000.0, tf.float16))
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, [half]))
    optimizer.apply_gradients(zip(grads, [half], strict=True))
    assert float(half.numpy()[0]) == 1.0
    assert float(optimizer.loss_scale) == 2.0**14


def test_fixed_scale_applies_even_a_non_finite_step():
    weight = tf.Variable([1.0])
    optimizer = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.SGD(1.0), dynamic=False, initial_scale=8
    )
    optimizer.apply_gradients([(tf.constant([np.inf]), weight)])
    assert np.isinf(weight.numpy()[0])
    assert float(optimizer.loss_scale) == 8.0


def test_scale_never_drops_below_one_nor_doubles_to_inf():
    weight = tf.Variable([1.0])
    low = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(0.0), initial_scale=2)
    for _ in range(3):
        low.apply_gradients([(tf.constant([np.nan]), weight)])
    assert float(low.loss_scale) == 1.0
    high = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.0), initial_scale=2.0**127, dynamic_growth_steps=1
    )
    high.apply_gradients([(tf.constant([1.0]), weight)])
    assert float(high.loss_scale) == 2.0**127
    assert int(high.dynamic_counter.numpy()) == 0
