"""`assert_config_equivalent` on live optimizers of the running TensorFlow/Keras generation."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from compat_lso import experimental
from compat_lso.testing import ConfigError, assert_config_equivalent, config_differences
from tests.shim.backend import HAS_LEGACY_OPTIMIZERS, IS_KERAS_3, NATIVE_LSO

CONFIGS = pathlib.Path(__file__).parent.parent / "fixtures" / "configs"
# The same optimizer written by every generation (see tests/fixtures/configs/make_configs.py).
DYNAMIC_FIXTURES = [
    "tf23_dynamic.json",
    "keras2_legacy_inner.json",
    "keras2_new_inner.json",
    "keras3.json",
]


def sgd(learning_rate: float = 0.5) -> tf.keras.optimizers.Optimizer:
    return tf.keras.optimizers.SGD(learning_rate, momentum=0.9)


# The examples of the TF 2.4 page (docs/reference.md), where "opt1 and opt2 are identical".
TF_2_4_PAGE_EXAMPLES = {
    "dynamic": (
        lambda: experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), loss_scale="dynamic"),
        lambda: compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD()),
    ),
    "fixed": (
        lambda: experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), loss_scale=123),
        lambda: compat_lso.LossScaleOptimizer(
            tf.keras.optimizers.SGD(), dynamic=False, initial_scale=123
        ),
    ),
    "dynamic-loss-scale": (
        lambda: experimental.LossScaleOptimizer(
            tf.keras.optimizers.SGD(),
            loss_scale=tf.compat.v1.mixed_precision.DynamicLossScale(
                initial_loss_scale=2048, increment_period=500
            ),
        ),
        lambda: compat_lso.LossScaleOptimizer(
            tf.keras.optimizers.SGD(), initial_scale=2048, dynamic_growth_steps=500
        ),
    ),
}


@pytest.mark.parametrize("example", sorted(TF_2_4_PAGE_EXAMPLES))
def test_old_and_new_constructions_from_the_tf_2_4_page_are_equivalent(example):
    make_old, make_new = TF_2_4_PAGE_EXAMPLES[example]
    with pytest.warns(DeprecationWarning):
        old = make_old()
    assert_config_equivalent(old, make_new())


@pytest.mark.parametrize("fixture", DYNAMIC_FIXTURES)
@pytest.mark.parametrize(
    "cls", [compat_lso.LossScaleOptimizer, NATIVE_LSO], ids=["compat_lso", "native"]
)
def test_an_optimizer_of_this_generation_matches_the_configs_every_generation_wrote(cls, fixture):
    optimizer = cls(sgd(), initial_scale=64, dynamic_growth_steps=10)
    assert_config_equivalent(optimizer, json.loads((CONFIGS / fixture).read_text()))


def test_generated_names_of_this_generation_are_ignored():
    first = NATIVE_LSO(sgd())
    second = NATIVE_LSO(sgd())
    if IS_KERAS_3:  # Keras 3 numbers names (sgd_1, loss_scale_optimizer_2): the configs differ
        assert first.get_config() != second.get_config()
    assert_config_equivalent(first, second)
    assert_config_equivalent(first, compat_lso.LossScaleOptimizer(sgd()))


def test_a_name_the_user_chose_is_compared():
    named = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5, momentum=0.9, name="my_sgd"))
    assert config_differences(compat_lso.LossScaleOptimizer(sgd()), named) == [
        "inner_optimizer.config.name: <missing> != 'my_sgd'"
    ]


def _train_one_step(optimizer: tf.keras.optimizers.Optimizer) -> None:
    variable = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        scaled_loss = optimizer.get_scaled_loss(tf.reduce_sum(variable**2))
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, [variable]))
    optimizer.apply_gradients(zip(grads, [variable], strict=True))
    assert int(optimizer.iterations) == 1


@pytest.mark.parametrize(
    "legacy",
    [
        False,
        pytest.param(
            True,
            marks=pytest.mark.skipif(
                not HAS_LEGACY_OPTIMIZERS, reason="Keras 3 has no legacy optimizers"
            ),
        ),
    ],
    ids=["new", "legacy"],
)
def test_a_trained_optimizer_equals_a_fresh_one_despite_float32_hyperparameters(legacy):
    # 0.01 is kept in a float32 variable once built; configs then read 0.009999999776482582
    # (a NumPy float32 from Keras 2's legacy optimizers).
    family = tf.keras.optimizers.legacy if legacy else tf.keras.optimizers
    trained = compat_lso.LossScaleOptimizer(family.SGD(0.01, momentum=0.9))
    _train_one_step(trained)
    fresh = compat_lso.LossScaleOptimizer(family.SGD(0.01, momentum=0.9))
    if legacy:  # a legacy optimizer writes 0.01 until built, 0.009999999776482582 after
        assert trained.get_config() != fresh.get_config()
    assert_config_equivalent(trained, fresh)


def test_a_different_learning_rate_fails_with_one_line():
    with pytest.raises(AssertionError) as failure:
        assert_config_equivalent(compat_lso.LossScaleOptimizer(sgd(0.01)), NATIVE_LSO(sgd(0.1)))
    assert str(failure.value).splitlines()[1:] == [
        "  inner_optimizer.config.learning_rate: 0.01 != 0.1"
    ]


def test_the_old_class_with_another_scale_is_not_equivalent():
    with pytest.warns(DeprecationWarning):
        old = experimental.LossScaleOptimizer(sgd(), loss_scale=128)
    assert config_differences(
        old, compat_lso.LossScaleOptimizer(sgd(), dynamic=False, initial_scale=256)
    ) == ["initial_scale: 128 != 256"]


def test_standalone_keras_3_objects_compare_with_this_generation():
    keras = pytest.importorskip("keras")
    if not hasattr(keras.optimizers, "LossScaleOptimizer"):
        pytest.skip("standalone keras is Keras 2 here")
    standalone = keras.optimizers.LossScaleOptimizer(
        keras.optimizers.SGD(0.5, momentum=0.9), initial_scale=64, dynamic_growth_steps=10
    )
    assert_config_equivalent(
        standalone, compat_lso.LossScaleOptimizer(sgd(), initial_scale=64, dynamic_growth_steps=10)
    )


def test_an_optimizer_that_is_not_a_loss_scale_optimizer_is_refused():
    with pytest.raises(ConfigError, match="expected a LossScaleOptimizer, but got a SGD"):
        assert_config_equivalent(sgd(), compat_lso.LossScaleOptimizer(sgd()))


def test_numpy_values_in_a_config_compare_as_numbers():
    config = compat_lso.LossScaleOptimizer(sgd()).get_config()
    config["initial_scale"] = np.float32(config["initial_scale"])
    config["inner_optimizer"]["config"]["nesterov"] = np.bool_(False)
    assert_config_equivalent(config, compat_lso.LossScaleOptimizer(sgd()))
