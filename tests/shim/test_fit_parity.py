"""`Model.fit` trains with compat_lso's class exactly as with the backend's native class.

On Keras 3, `fit` calls `scale_loss` and then `apply_gradients` with scaled gradients; the shim
must divide them as Keras 3 does, bit for bit. On Keras 2 the native class is the reference for
TF 2.4 behaviour itself.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from tests.shim.backend import IS_KERAS_3, NATIVE_LSO


@pytest.fixture
def mixed_float16_policy():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    yield
    tf.keras.mixed_precision.set_global_policy("float32")


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(64, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")
    return x, y


def _model(initial_weights: list[np.ndarray] | None = None) -> tf.keras.Model:
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(8,)),
            tf.keras.layers.Dense(16, activation="relu"),
            tf.keras.layers.Dense(1, dtype="float32"),
        ]
    )
    if initial_weights is not None:
        model.set_weights(initial_weights)
    return model


def _train(optimizer: tf.keras.optimizers.Optimizer, initial_weights, jit_compile=False):
    model = _model(initial_weights)
    model.compile(optimizer=optimizer, loss="mse", jit_compile=jit_compile)
    x, y = _data()
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    return model, history


@pytest.mark.parametrize("jit_compile", [False, True], ids=["graph", "xla"])
@pytest.mark.usefixtures("mixed_float16_policy")
def test_fit_matches_native_class_bit_for_bit(jit_compile):
    initial_weights = _model().get_weights()
    native_model, native_history = _train(
        NATIVE_LSO(tf.keras.optimizers.SGD(0.05), initial_scale=1024.0, dynamic_growth_steps=4),
        initial_weights,
        jit_compile,
    )
    compat_model, compat_history = _train(
        compat_lso.LossScaleOptimizer(
            tf.keras.optimizers.SGD(0.05), initial_scale=1024.0, dynamic_growth_steps=4
        ),
        initial_weights,
        jit_compile,
    )

    assert compat_history.history["loss"] == native_history.history["loss"]
    for compat_weight, native_weight in zip(
        compat_model.get_weights(), native_model.get_weights(), strict=True
    ):
        np.testing.assert_array_equal(compat_weight, native_weight)
    # 12 finite steps with growth every 4: the scale doubled three times on both.
    assert float(compat_model.optimizer.loss_scale) == 1024.0 * 2**3
    # The native class's own `iterations` is its inner optimizer's only from Keras 3.9.
    native_iterations = int(native_model.optimizer.inner_optimizer.iterations.numpy())
    assert int(compat_model.optimizer.iterations.numpy()) == native_iterations == 12


@pytest.mark.usefixtures("mixed_float16_policy")
def test_compile_does_not_wrap_the_shim_again():
    optimizer = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD())
    model = _model()
    model.compile(optimizer=optimizer, loss="mse")
    assert model.optimizer is optimizer
    # Positional, and around the optimizer a name gives (`compile("adam")`): what LSO023 writes.
    optimizer = compat_lso.LossScaleOptimizer(tf.keras.optimizers.get("adam"))
    model = _model()
    model.compile(optimizer, "mse")
    assert model.optimizer is optimizer
    assert type(optimizer.inner_optimizer) is type(tf.keras.optimizers.get("adam"))


@pytest.mark.usefixtures("mixed_float16_policy")
def test_fit_with_fixed_scale_applies_every_step():
    optimizer = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.05), dynamic=False, initial_scale=256
    )
    _, history = _train(optimizer, _model().get_weights())
    assert int(optimizer.iterations.numpy()) == 12
    assert float(optimizer.loss_scale) == 256.0
    assert history.history["loss"][-1] < history.history["loss"][0]


@pytest.mark.skipif(not IS_KERAS_3, reason="Keras 3's scale_loss/apply protocol")
def test_scaled_gradients_are_divided_as_the_installed_keras_divides_them():
    # Keras 3.10 leaves the gradient of a variable that is overwritten with its gradient
    # (`overwrite_with_gradient`) undivided; before, the native class divided every gradient.
    # Whatever the release, the shim must end where the native class ends.
    def step(lso_class):
        variables = [tf.keras.Variable(1.0), tf.keras.Variable(1.0)]
        variables[0].overwrite_with_gradient = True
        optimizer = lso_class(tf.keras.optimizers.SGD(1.0), initial_scale=4.0)
        optimizer.scale_loss(tf.constant(1.0))  # the shim divides only after scale_loss
        optimizer.apply([tf.constant(8.0), tf.constant(8.0)], variables)
        return [float(v.numpy()) for v in variables]

    assert step(compat_lso.LossScaleOptimizer) == step(NATIVE_LSO)
