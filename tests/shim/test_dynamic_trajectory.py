"""Keras 2's dynamic loss-scale trajectory (docs/reference.md), for both classes, eagerly and in
tf.function.

Initial scale 4, growth steps 3, (unscaled) gradients 1, 1, 1, 1, inf, nan, 1:
scale after each step 4, 4, 8, 8, 4, 2, 2; counter 1, 2, 0, 1, 0, 0, 1; iterations 1..7.
Skipped steps leave the weights and the optimizer slots untouched.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

GRADS = [1.0, 1.0, 1.0, 1.0, math.inf, math.nan, 1.0]
SCALES = [4.0, 4.0, 8.0, 8.0, 4.0, 2.0, 2.0]
COUNTERS = [1, 2, 0, 1, 0, 0, 1]
APPLIED = [True, True, True, True, False, False, True]


def _inner_state(opt):
    """Values of the inner optimizer's variables other than the step counter (slots, ...)."""
    inner = opt.inner_optimizer
    variables = inner.variables
    if callable(variables):  # legacy OptimizerV2: variables() is a method
        variables = variables()
    iterations = inner.iterations
    return [
        v.numpy().copy() for v in variables if v is not iterations and "iteration" not in v.name
    ]


def _assert_same_state(before, after):
    assert len(before) == len(after)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(b, a)


def _run_trajectory(opt, step, var):
    applied_steps = 0
    for i, g in enumerate(GRADS):
        before_var = var.numpy().copy()
        before_state = _inner_state(opt) if i > 0 else None
        step(tf.constant(g))
        assert float(opt.loss_scale) == SCALES[i], f"loss scale after step {i + 1}"
        assert int(opt.dynamic_counter.numpy()) == COUNTERS[i], f"counter after step {i + 1}"
        assert int(opt.iterations.numpy()) == i + 1, f"iterations after step {i + 1}"
        if APPLIED[i]:
            applied_steps += 1
            # SGD, learning rate 1, gradient 1 (with momentum 0.5: slots move the step size)
            assert not np.array_equal(var.numpy(), before_var), f"step {i + 1} was not applied"
        else:
            np.testing.assert_array_equal(var.numpy(), before_var)
            _assert_same_state(before_state, _inner_state(opt))
    return applied_steps


def test_dynamic_trajectory_with_apply_gradients(lso_cls, make_sgd, maybe_tf_function):
    var = tf.Variable([0.0, 0.0])
    opt = lso_cls(make_sgd(1.0, momentum=0.5), initial_scale=4, dynamic_growth_steps=3)
    assert opt.dynamic is True
    assert float(opt.loss_scale) == 4.0
    assert int(opt.dynamic_counter.numpy()) == 0

    @maybe_tf_function
    def step(g):
        # apply_gradients takes UNSCALED gradients and never unscales them.
        opt.apply_gradients([(tf.fill([2], g), var)])

    _run_trajectory(opt, step, var)
    # Plain SGD with momentum 0.5 over the five applied unit gradients:
    # velocities 1, 1.5, 1.75, 1.875, then 1.9375 (the skipped steps leave the slot alone).
    np.testing.assert_allclose(var.numpy(), [-8.0625, -8.0625])


def test_dynamic_trajectory_with_minimize(lso_cls, make_sgd, maybe_tf_function):
    var = tf.Variable(0.0)
    opt = lso_cls(make_sgd(1.0), initial_scale=4, dynamic_growth_steps=3)

    @maybe_tf_function
    def step(g):
        # d(var * g)/d var == g; minimize scales the loss and unscales the gradient itself.
        opt.minimize(lambda: var * g, var_list=[var])

    assert _run_trajectory(opt, step, var) == 5
    assert var.numpy() == -5.0


def test_dynamic_trajectory_with_manual_scaling(lso_cls, make_sgd, maybe_tf_function):
    var = tf.Variable(0.0)
    opt = lso_cls(make_sgd(1.0), initial_scale=4, dynamic_growth_steps=3)

    @maybe_tf_function
    def step(g):
        with tf.GradientTape() as tape:
            scaled = opt.get_scaled_loss(var * g)
        (grad,) = opt.get_unscaled_gradients(tape.gradient(scaled, [var]))
        opt.apply_gradients([(grad, var)])

    assert _run_trajectory(opt, step, var) == 5
    assert var.numpy() == -5.0


def test_loss_scale_halving_stops_at_one(lso_cls, make_sgd, maybe_tf_function):
    var = tf.Variable(3.0)
    opt = lso_cls(make_sgd(1.0), initial_scale=4, dynamic_growth_steps=3)

    @maybe_tf_function
    def step():
        opt.apply_gradients([(tf.constant(math.nan), var)])

    scales = []
    for _ in range(4):
        step()
        scales.append(float(opt.loss_scale))
    assert scales == [2.0, 1.0, 1.0, 1.0]
    assert int(opt.iterations.numpy()) == 4
    assert var.numpy() == 3.0


def test_loss_scale_does_not_grow_to_infinity(lso_cls, make_sgd, maybe_tf_function):
    var = tf.Variable(0.0)
    big = float(np.finfo(np.float32).max)
    opt = lso_cls(make_sgd(0.0), initial_scale=big, dynamic_growth_steps=1)

    @maybe_tf_function
    def step():
        opt.apply_gradients([(tf.constant(1.0), var)])

    step()
    # Doubling would overflow float32: the scale stays finite (and the counter resets).
    assert float(opt.loss_scale) == big
    assert int(opt.dynamic_counter.numpy()) == 0
    assert int(opt.iterations.numpy()) == 1


def test_one_nonfinite_gradient_among_several_skips_every_variable(
    lso_cls, make_sgd, maybe_tf_function
):
    v1 = tf.Variable(1.0)
    v2 = tf.Variable([2.0, 3.0])
    opt = lso_cls(make_sgd(1.0), initial_scale=8, dynamic_growth_steps=2)

    @maybe_tf_function
    def step(bad):
        opt.apply_gradients([(tf.constant(1.0), v1), (tf.stack([1.0, bad]), v2)])

    step(tf.constant(1.0))
    assert (v1.numpy(), v2.numpy().tolist()) == (0.0, [1.0, 2.0])
    assert int(opt.dynamic_counter.numpy()) == 1
    step(tf.constant(math.inf))
    assert (v1.numpy(), v2.numpy().tolist()) == (0.0, [1.0, 2.0])
    assert float(opt.loss_scale) == 4.0
    assert int(opt.dynamic_counter.numpy()) == 0
    assert int(opt.iterations.numpy()) == 2


def test_fixed_loss_scale_never_changes_and_applies_every_step(
    lso_cls, make_sgd, maybe_tf_function
):
    var = tf.Variable(0.0)
    opt = lso_cls(make_sgd(1.0), dynamic=False, initial_scale=4)
    assert opt.dynamic is False
    assert opt.dynamic_counter is None
    assert opt.dynamic_growth_steps is None
    assert opt.initial_scale == 4.0

    @maybe_tf_function
    def step(g):
        opt.apply_gradients([(g, var)])

    for i, g in enumerate([1.0, 1.0, 1.0, 1.0]):
        step(tf.constant(g))
        assert float(opt.loss_scale) == 4.0
        assert int(opt.iterations.numpy()) == i + 1
    assert var.numpy() == -4.0
    # Non-finite gradients are not checked with a fixed scale: the step is applied.
    step(tf.constant(math.inf))
    assert float(opt.loss_scale) == 4.0
    assert int(opt.iterations.numpy()) == 5
    assert var.numpy() == -math.inf


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fixed_loss_scale_scales_and_unscales(lso_cls, make_sgd, dtype):
    opt = lso_cls(make_sgd(1.0), dynamic=False, initial_scale=16)
    scaled = opt.get_scaled_loss(tf.constant(3.0, dtype=dtype))
    assert scaled.dtype == tf.as_dtype(dtype)
    assert float(scaled) == 48.0
    (g,) = opt.get_unscaled_gradients([tf.constant(48.0, dtype=dtype)])
    assert g.dtype == tf.as_dtype(dtype)
    assert float(g) == 3.0
