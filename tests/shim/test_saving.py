"""Keras serialization and model saving bring back compat_lso's classes, with their settings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from compat_lso import experimental
from tests.shim.backend import HAS_LEGACY_OPTIMIZERS, IS_KERAS_2


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


OPTIMIZERS = dict(_optimizers())


def _public_class(optimizer):
    # TF 2.4-2.8 saved the experimental class as one that loads as the non-experimental class
    # (Keras 2.8's optimizers.deserialize mapped "LossScaleOptimizerV1" to LossScaleOptimizer).
    del optimizer
    return compat_lso.LossScaleOptimizer


def test_a_saved_experimental_optimizer_loads_as_the_new_class_without_a_warning():
    with pytest.warns(DeprecationWarning):
        optimizer = experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 16)
    serialized = tf.keras.optimizers.serialize(optimizer)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        restored = tf.keras.optimizers.deserialize(serialized)
    assert not isinstance(restored, experimental.LossScaleOptimizer)
    assert restored.get_config() == optimizer.get_config()
    # What compat_lso wrote for the experimental class before loads as the new class too.
    earlier = {**serialized, "class_name": "compat_lso.experimental>LossScaleOptimizer"}
    earlier.pop("registered_name", None)
    earlier.pop("module", None)
    assert type(tf.keras.optimizers.deserialize(earlier)) is type(restored)


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
def test_model_save_and_load_model_bring_the_optimizer_back(kind, file_format, trained, tmp_path):
    # compiled-only: Keras 2's own loss scale optimizer cannot be loaded from a `.keras` file
    # saved before training (its loader reads an optimizer name the class lacks).
    model = _trained_model(OPTIMIZERS[kind](), train=trained)
    path = tmp_path / f"model.{file_format}"
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert isinstance(loaded.optimizer, _public_class(model.optimizer))
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    for loaded_weight, weight in zip(loaded.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(loaded_weight, weight)
