"""Keras serialization and model saving bring back compat_lso's classes, with their settings."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from packaging.version import Version

import compat_lso
from compat_lso import _backend, experimental
from tests.shim.backend import HAS_LEGACY_OPTIMIZERS, IS_KERAS_2, NATIVE_LSO

# Keras 2.13-2.14's `compile_from_config` builds every optimizer it loads from a `.keras` file,
# and legacy optimizers have no `build`: any model compiled with one, wrapped or not, fails to
# load (fixed in Keras 2.15, keras-team/keras@277a4ff1b1).
LEGACY_KERAS_FILES_FAIL = Version("2.13") <= _backend.keras_version() < Version("2.15")


def _optimizers():
    yield (
        "new-dynamic",
        lambda: compat_lso.LossScaleOptimizer(
            tf.keras.optimizers.Adam(0.01), initial_scale=64, dynamic_growth_steps=5
        ),
    )
    yield (
        "new-fixed",
        lambda: compat_lso.LossScaleOptimizer(
            tf.keras.optimizers.SGD(0.1), dynamic=False, initial_scale=32
        ),
    )
    yield "experimental", lambda: experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 16)
    if HAS_LEGACY_OPTIMIZERS:
        yield (
            "legacy-inner",
            lambda: compat_lso.LossScaleOptimizer(
                tf.keras.optimizers.legacy.SGD(0.1), initial_scale=8
            ),
        )
        # The reference: Keras 2's own class, where the shim's result must be the same.
        yield (
            "legacy-inner-native",
            lambda: NATIVE_LSO(tf.keras.optimizers.legacy.SGD(0.1), initial_scale=8),
        )


OPTIMIZERS = dict(_optimizers())


def _public_class(optimizer):
    # On Keras 2 the instance's class is a concrete subclass of the public class.
    if isinstance(optimizer, experimental.LossScaleOptimizer):
        return experimental.LossScaleOptimizer
    if isinstance(optimizer, compat_lso.LossScaleOptimizer):
        return compat_lso.LossScaleOptimizer
    return NATIVE_LSO


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_serialize_deserialize_round_trips_the_class(kind):
    optimizer = OPTIMIZERS[kind]()
    restored = tf.keras.optimizers.deserialize(tf.keras.optimizers.serialize(optimizer))
    assert isinstance(restored, _public_class(optimizer))
    assert type(restored.inner_optimizer) is type(optimizer.inner_optimizer)
    assert restored.get_config() == optimizer.get_config()


def _trained_model(optimizer, train=True):
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer=optimizer, loss="mse")
    if train:
        x = np.ones((8, 4), "float32")
        model.fit(x, np.zeros((8, 2), "float32"), epochs=2, batch_size=4, verbose=0)
    return model


def _formats():
    yield "keras"
    if IS_KERAS_2:
        yield "h5"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("trained", [True, False], ids=["trained", "compiled-only"])
@pytest.mark.parametrize("file_format", list(_formats()))
@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_model_save_and_load_model_bring_the_optimizer_back(
    kind, file_format, trained, tmp_path, request
):
    # compiled-only: Keras 2's own loss scale optimizer cannot be loaded from a `.keras` file
    # saved before training (its loader reads an optimizer name the class lacks).
    if kind.startswith("legacy-inner") and file_format == "keras" and LEGACY_KERAS_FILES_FAIL:
        request.applymarker(
            pytest.mark.xfail(
                raises=AttributeError,
                strict=True,
                reason="Keras 2.13-2.14 cannot load a `.keras` file of a model compiled with a "
                "legacy optimizer (keras-team/keras@277a4ff1b1, Keras 2.15)",
            )
        )
    model = _trained_model(OPTIMIZERS[kind](), train=trained)
    path = tmp_path / f"model.{file_format}"
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert isinstance(loaded.optimizer, _public_class(model.optimizer))
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    for loaded_weight, weight in zip(loaded.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(loaded_weight, weight)
