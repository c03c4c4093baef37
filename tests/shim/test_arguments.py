"""Every bad constructor argument gets a TypeError or ValueError that names it."""

from __future__ import annotations

import math

import pytest
import tensorflow as tf

import compat_lso
from compat_lso import experimental
from tests.shim.backend import HAS_LEGACY_OPTIMIZERS

SGD = tf.keras.optimizers.SGD

BAD_ARGUMENTS = [
    # (id, keyword arguments besides the inner optimizer, error, a phrase the message holds)
    (
        "old-positional-dynamic-string",
        {"dynamic": "dynamic"},
        TypeError,
        '"dynamic" argument .* must be a bool',
    ),
    ("dynamic-none", {"dynamic": None}, TypeError, '"dynamic" argument'),
    ("dynamic-int", {"dynamic": 1}, TypeError, '"dynamic" argument'),
    (
        "fixed-without-scale",
        {"dynamic": False},
        ValueError,
        '"initial_scale" must be specified if "dynamic" is False',
    ),
    (
        "fixed-with-growth",
        {"dynamic": False, "initial_scale": 8, "dynamic_growth_steps": 10},
        ValueError,
        '"dynamic_growth_steps" must be None if "dynamic" is False, but got: 10',
    ),
    (
        "scale-string",
        {"initial_scale": "big"},
        TypeError,
        '"initial_scale" must be a positive int or float',
    ),
    ("scale-bool", {"initial_scale": True}, TypeError, '"initial_scale"'),
    (
        "scale-zero",
        {"initial_scale": 0},
        ValueError,
        '"initial_scale" must be a positive, finite number',
    ),
    ("scale-negative", {"initial_scale": -4.0}, ValueError, '"initial_scale"'),
    ("scale-nan", {"initial_scale": math.nan}, ValueError, '"initial_scale"'),
    ("scale-inf", {"initial_scale": math.inf}, ValueError, '"initial_scale"'),
    (
        "growth-float",
        {"dynamic_growth_steps": 2.5},
        TypeError,
        '"dynamic_growth_steps" must be a positive int',
    ),
    ("growth-string", {"dynamic_growth_steps": "10"}, TypeError, '"dynamic_growth_steps"'),
    (
        "growth-zero",
        {"dynamic_growth_steps": 0},
        ValueError,
        '"dynamic_growth_steps" must be at least 1',
    ),
    ("growth-negative", {"dynamic_growth_steps": -3}, ValueError, '"dynamic_growth_steps"'),
]


@pytest.mark.parametrize(
    "arguments, error, match",
    [case[1:] for case in BAD_ARGUMENTS],
    ids=[case[0] for case in BAD_ARGUMENTS],
)
def test_bad_argument_is_named_in_the_error(arguments, error, match):
    with pytest.raises(error, match=match):
        compat_lso.LossScaleOptimizer(SGD(), **arguments)


def test_positional_old_call_fails_loudly_instead_of_silently():
    # Keras 3's own class would take "dynamic" as initial_scale without a word.
    with pytest.raises(TypeError, match='"dynamic" argument'):
        compat_lso.LossScaleOptimizer(SGD(), "dynamic")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "inner", [None, "sgd", 0.1, tf.Variable(1.0)], ids=["none", "string", "float", "variable"]
)
def test_non_optimizer_inner_is_refused_naming_inner_optimizer(inner):
    with pytest.raises(TypeError, match='"inner_optimizer" must be an instance of'):
        compat_lso.LossScaleOptimizer(inner)


def test_loss_scale_optimizer_cannot_wrap_another():
    with pytest.raises(TypeError, match="cannot wrap another LossScaleOptimizer"):
        compat_lso.LossScaleOptimizer(compat_lso.LossScaleOptimizer(SGD()))


def test_native_loss_scale_optimizer_cannot_be_wrapped_either():
    with pytest.raises(TypeError, match="cannot wrap another LossScaleOptimizer"):
        compat_lso.LossScaleOptimizer(tf.keras.mixed_precision.LossScaleOptimizer(SGD()))


def test_one_inner_optimizer_cannot_be_wrapped_twice():
    inner = SGD()
    compat_lso.LossScaleOptimizer(inner)
    with pytest.raises(ValueError, match='"inner_optimizer" is already wrapped'):
        compat_lso.LossScaleOptimizer(inner)


def test_missing_inner_optimizer_is_named():
    with pytest.raises(TypeError, match="inner_optimizer"):
        compat_lso.LossScaleOptimizer()  # type: ignore[call-arg]


@pytest.mark.skipif(not HAS_LEGACY_OPTIMIZERS, reason="Keras 3 has no legacy optimizers")
def test_legacy_inner_gets_the_same_checks():
    with pytest.raises(ValueError, match='"initial_scale" must be specified'):
        compat_lso.LossScaleOptimizer(tf.keras.optimizers.legacy.SGD(), dynamic=False)


BAD_LOSS_SCALES = [
    (
        "unknown-string",
        "auto",
        ValueError,
        'Invalid value passed to loss_scale. loss_scale must be the string "dynamic"',
    ),
    ("none", None, ValueError, "Invalid value passed to loss_scale"),
    ("list", [8], ValueError, "Invalid value passed to loss_scale"),
    (
        "multiplier-3",
        experimental.DynamicLossScale(multiplier=3),
        ValueError,
        "DynamicLossScale.multiplier must be 2",
    ),
    ("zero", 0, ValueError, '"initial_scale"'),
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(
    "loss_scale, error, match",
    [case[1:] for case in BAD_LOSS_SCALES],
    ids=[case[0] for case in BAD_LOSS_SCALES],
)
def test_bad_loss_scale_gets_the_old_error(loss_scale, error, match):
    with pytest.raises(error, match=match):
        experimental.LossScaleOptimizer(SGD(), loss_scale)


def test_other_loss_scale_subclass_is_a_type_error():
    class HalvingLossScale(experimental.LossScale):
        def get_config(self):
            return {}

    with pytest.raises(TypeError, match="not a FixedLossScale or a DynamicLossScale"):
        experimental.LossScaleOptimizer(SGD(), HalvingLossScale())


def test_tensorflows_own_multiplier_check_applies_too():
    loss_scale = tf.compat.v1.mixed_precision.DynamicLossScale(multiplier=4)
    with pytest.raises(ValueError, match=r"DynamicLossScale\.multiplier must be 2"):
        experimental.LossScaleOptimizer(SGD(), loss_scale)


@pytest.mark.parametrize(
    "value, match",
    [("8", "must be a Python int or float"), (0.5, "must be at least 1")],
    ids=["string", "below-one"],
)
def test_fixed_loss_scale_errors_are_tensorflows(value, match):
    with pytest.raises(ValueError, match=match):
        experimental.FixedLossScale(value)


def test_tensorflows_internal_keras_optimizer_is_refused_with_keras_2_8s_hint():
    # TensorFlow still ships its internal copy of TF 2.4's Keras (`tensorflow.python.keras`, TF
    # 2.15 and 2.21 alike); its optimizers look like Keras's but are not. Keras 2.8 refused them
    # with a hint to use the public API, and so does the shim.
    from tensorflow.python.keras.optimizer_v2 import gradient_descent as internal_keras

    with pytest.raises(TypeError) as refused:
        compat_lso.LossScaleOptimizer(internal_keras.SGD())
    message = str(refused.value)
    assert message.startswith('"inner_optimizer" must be an instance of')
    assert "not an instance of `tensorflow.python.keras.optimizers`" in message
    assert "use the tf.keras public API instead" in message
