"""The shim inside ``Model.compile`` / ``Model.fit`` (one tiny Dense layer, a couple of steps).

Keras 2's training step calls ``optimizer.minimize(loss, vars, tape=tape)``; Keras 3's calls
``optimizer.scale_loss(loss)`` and then ``optimizer.apply(grads, vars)`` expecting SCALED gradients.
Either way a loss-scaled fit step must update the weights exactly as the plain optimizer does,
and update the loss scale. Compared with the plain inner optimizer's own fit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

X = np.array([[1.0], [2.0]], dtype="float32")
Y = np.array([[0.0], [1.0]], dtype="float32")


def _model():
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(1,)),
            tf.keras.layers.Dense(1, use_bias=False, kernel_initializer="ones"),
        ]
    )


def _fit(optimizer, x=X, y=Y):
    model = _model()
    model.compile(optimizer=optimizer, loss="mse")
    model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0)
    return model


def test_fit_updates_weights_like_the_plain_optimizer(lso_cls, make_sgd):
    reference = _fit(make_sgd(0.1)).get_weights()[0]
    # w = 1: step 1 (x=1, y=0): grad 2 -> 0.8; step 2 (x=2, y=1): grad 2*(1.6-1)*2 = 2.4 -> 0.56
    np.testing.assert_allclose(reference, [[0.56]], rtol=1e-6)

    opt = lso_cls(make_sgd(0.1), initial_scale=1024, dynamic_growth_steps=1)
    model = _fit(opt)
    assert model.optimizer is opt
    np.testing.assert_allclose(model.get_weights()[0], reference, rtol=1e-6)
    assert int(opt.iterations.numpy()) == 2
    assert float(opt.loss_scale) == 4096.0  # grew after each of the two good steps
    assert int(opt.dynamic_counter.numpy()) == 0


def test_fit_with_fixed_loss_scale_updates_weights_like_the_plain_optimizer(lso_cls, make_sgd):
    opt = lso_cls(make_sgd(0.1), dynamic=False, initial_scale=512)
    model = _fit(opt)
    np.testing.assert_allclose(model.get_weights()[0], [[0.56]], rtol=1e-6)
    assert float(opt.loss_scale) == 512.0
    assert int(opt.iterations.numpy()) == 2


def test_fit_skips_a_nonfinite_step(lso_cls, make_sgd):
    opt = lso_cls(make_sgd(0.1), initial_scale=1024, dynamic_growth_steps=1)
    model = _fit(opt, x=X[:1], y=np.array([[math.nan]], dtype="float32"))
    np.testing.assert_array_equal(model.get_weights()[0], [[1.0]])
    assert float(opt.loss_scale) == 512.0
    assert int(opt.iterations.numpy()) == 1


@pytest.fixture
def mixed_float16():
    previous = tf.keras.mixed_precision.global_policy()
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        yield
    finally:
        tf.keras.mixed_precision.set_global_policy(previous)


def test_compile_under_mixed_float16_keeps_the_given_optimizer(lso_cls, make_sgd, mixed_float16):
    opt = lso_cls(make_sgd(0.1), initial_scale=1024, dynamic_growth_steps=1)
    model = _fit(opt)
    # Not wrapped a second time.
    assert model.optimizer is opt
    np.testing.assert_allclose(model.get_weights()[0], [[0.56]], rtol=1e-3)
    assert int(opt.iterations.numpy()) == 2
    assert float(opt.loss_scale) == 4096.0


def test_manual_tf24_step_after_fit_does_not_unscale_again(lso_cls, make_sgd):
    # Keras 3's fit hands apply() scaled gradients; a later TF 2.4-style apply_gradients call
    # with unscaled gradients on the same optimizer must not be divided by the loss scale.
    opt = lso_cls(make_sgd(0.1), dynamic=False, initial_scale=8)
    model = _fit(opt)
    np.testing.assert_allclose(model.get_weights()[0], [[0.56]], rtol=1e-6)
    # New-style optimizers only update the variables they were built with: use the kernel.
    kernel = model.trainable_variables[0]
    opt.apply_gradients([(tf.constant([[1.0]]), kernel)])
    np.testing.assert_allclose(kernel.numpy(), [[0.46]], rtol=1e-6)
    with tf.GradientTape() as tape:
        scaled = opt.get_scaled_loss(tf.reduce_sum(kernel * 2.0))
    (grad,) = opt.get_unscaled_gradients(tape.gradient(scaled, [kernel]))
    opt.apply_gradients([(grad, kernel)])
    np.testing.assert_allclose(kernel.numpy(), [[0.26]], rtol=1e-6)
    assert int(opt.iterations.numpy()) == 4
