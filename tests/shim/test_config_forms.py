"""`from_config` reads every config form that real TensorFlow versions wrote, on every backend.

The fixtures in tests/fixtures/configs/ were written by the native classes of TF 2.15 (Keras 2)
and TF 2.21 (Keras 3) (see make_configs.py there), and by hand for TF 2.1-2.3.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import warnings

import pytest
import tensorflow as tf

import compat_lso
from compat_lso import experimental
from tests.shim.backend import IS_KERAS_2, IS_KERAS_3, NATIVE_LSO


@contextlib.contextmanager
def _no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        yield


CONFIGS = pathlib.Path(__file__).parent.parent / "fixtures" / "configs"

# file -> (dynamic, initial_scale, dynamic_growth_steps, inner class name, learning rate)
EXPECTED = {
    "tf23_dynamic.json": (True, 64.0, 10, "SGD", 0.5),
    "tf23_fixed.json": (False, 128.0, None, "Adam", 0.001),
    "keras2_new_inner.json": (True, 64.0, 10, "SGD", 0.5),
    "keras2_legacy_inner.json": (True, 64.0, 10, "SGD", 0.5),
    "keras2_fixed.json": (False, 128.0, None, "Adam", 0.001),
    "keras3.json": (True, 64.0, 10, "SGD", 0.5),
    # Keras 3.0-3.11 also write the base optimizer's keys, at their defaults.
    "keras3_0.json": (True, 64.0, 10, "SGD", 0.5),
}


def _load(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("cls_name", ["LossScaleOptimizer", "experimental.LossScaleOptimizer"])
def test_from_config_reads_every_historical_form(name, cls_name):
    cls = (
        compat_lso.LossScaleOptimizer
        if cls_name == "LossScaleOptimizer"
        else experimental.LossScaleOptimizer
    )
    dynamic, initial_scale, growth_steps, inner_class, learning_rate = EXPECTED[name]
    with (
        pytest.warns(DeprecationWarning)
        if cls is experimental.LossScaleOptimizer
        else _no_warning()
    ):
        optimizer = cls.from_config(_load(name))
    assert isinstance(optimizer, cls)
    assert isinstance(optimizer, NATIVE_LSO)
    assert (optimizer.dynamic, optimizer.initial_scale, optimizer.dynamic_growth_steps) == (
        dynamic,
        initial_scale,
        growth_steps,
    )
    assert type(optimizer.inner_optimizer).__name__ == inner_class
    assert float(optimizer.inner_optimizer.learning_rate.numpy()) == pytest.approx(learning_rate)


def test_keras_3_generated_name_is_not_carried_over():
    optimizer = compat_lso.LossScaleOptimizer.from_config(_load("keras3.json"))
    assert "name" not in optimizer.get_config()


@pytest.mark.skipif(not IS_KERAS_3, reason="only Keras 3 loss scale optimizers have a name")
def test_a_name_the_user_gave_is_kept():
    config = _load("keras3.json")
    config["name"] = "my_lso"
    optimizer = compat_lso.LossScaleOptimizer.from_config(config)
    assert optimizer.name == "my_lso"
    assert optimizer.get_config()["name"] == "my_lso"


@pytest.mark.skipif(
    not IS_KERAS_2, reason="checks the hand-written fixtures against Keras 2's reader"
)
@pytest.mark.parametrize("name", ["tf23_dynamic.json", "tf23_fixed.json"])
def test_hand_written_tf23_fixtures_are_read_by_keras_2_itself(name):
    dynamic, initial_scale, growth_steps, _, _ = EXPECTED[name]
    native = tf.keras.optimizers.deserialize(
        {"class_name": "LossScaleOptimizer", "config": _load(name)}, use_legacy_optimizer=True
    )
    assert (native.dynamic, native.initial_scale, native.dynamic_growth_steps) == (
        dynamic,
        initial_scale,
        growth_steps,
    )


def test_config_round_trips_through_from_config():
    original = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.Adam(0.01), initial_scale=8, dynamic_growth_steps=3
    )
    restored = compat_lso.LossScaleOptimizer.from_config(original.get_config())
    assert restored.get_config() == original.get_config()
    # And the values themselves, as constructed (not only the shim against itself).
    assert (restored.dynamic, restored.initial_scale, restored.dynamic_growth_steps) == (
        True,
        8.0,
        3,
    )
    assert type(restored.inner_optimizer).__name__ == "Adam"
    assert float(restored.inner_optimizer.learning_rate.numpy()) == pytest.approx(0.01)


@pytest.mark.parametrize(
    "config, error, match",
    [
        ({"dynamic": True}, ValueError, "inner_optimizer"),
        ({"optimizer": {"class_name": "SGD", "config": {}}}, ValueError, "loss_scale"),
        (
            {
                "optimizer": {"class_name": "SGD", "config": {}},
                "loss_scale": {"class_name": "DynamicLossScale", "config": {"multiplier": 3.0}},
            },
            ValueError,
            "multiplier is not 2",
        ),
        (
            {
                "optimizer": {"class_name": "SGD", "config": {}},
                "loss_scale": {"class_name": "MyLossScale", "config": {}},
            },
            ValueError,
            "neither a FixedLossScale nor a DynamicLossScale",
        ),
        ("not a dict", TypeError, "must be a dict"),
        (
            {**_load("keras3_0.json"), "clipnorm": 1.0},
            ValueError,
            r"sets clipnorm=1.0, .* Move clipnorm=1.0 into the config under 'inner_optimizer'",
        ),
        ({**_load("keras3.json"), "use_emma": True}, ValueError, r"Unknown keys .*use_emma"),
    ],
    ids=[
        "no-inner-optimizer",
        "tf23-without-loss-scale",
        "multiplier-3",
        "unknown-loss-scale",
        "not-a-dict",
        "keras-3-base-key-not-at-its-default",
        "misspelt-key",
    ],
)
def test_bad_configs_are_refused_with_a_message_naming_the_problem(config, error, match):
    with pytest.raises(error, match=match):
        compat_lso.LossScaleOptimizer.from_config(config)


@pytest.mark.parametrize("cls_name", ["LossScaleOptimizer", "experimental.LossScaleOptimizer"])
def test_a_tf23_dynamic_loss_scale_with_another_multiplier_is_refused_by_both_classes(cls_name):
    # TF 2.3 wrote the multiplier into the config; the classes since only double and halve.
    config = _load("tf23_dynamic.json")
    config["loss_scale"]["config"]["multiplier"] = 4.0
    cls = (
        compat_lso.LossScaleOptimizer
        if cls_name == "LossScaleOptimizer"
        else experimental.LossScaleOptimizer
    )
    with pytest.raises(
        ValueError,
        match=r"^Cannot deserialize LossScaleOptimizer with a DynamicLossScale whose multiplier is "
        r"not 2\. Got DynamicLossScale: DynamicLossScale\(.*multiplier=4\.0",
    ):
        cls.from_config(config)
