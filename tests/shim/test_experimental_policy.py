"""`compat_lso.experimental.Policy` and the graph rewrite, as TF 2.4-2.8's Keras had them.

The values are Keras 2.8's (its policy and graph rewrite tests): the experimental Policy's
`loss_scale` for each name and argument, its repr, the log line for a loss scale on a policy
that does not compute in float16, its config; the graph rewrite wraps a Keras optimizer in the
experimental class, refuses a loss scale optimizer and a mixed global policy before it turns
anything on, and on Keras 2 turns on the flag that makes Keras refuse a mixed policy afterwards.
"""

from __future__ import annotations

import logging
import warnings

import pytest
import tensorflow as tf

from compat_lso import experimental
from tests.shim.backend import IS_KERAS_3

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(autouse=True)
def _no_rewrite_and_the_default_policy():
    yield
    experimental.disable_mixed_precision_graph_rewrite()
    tf.keras.mixed_precision.set_global_policy("float32")


class _Records(logging.Handler):
    """What TensorFlow's logger (`tf.get_logger()`, which `tf_logging.warning` writes to) got."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def tf_log():
    records = _Records()
    tf.get_logger().addHandler(records)
    yield records.messages
    tf.get_logger().removeHandler(records)


def _auto_mixed_precision() -> bool:
    return bool(tf.config.optimizer.get_experimental_options().get("auto_mixed_precision", False))


# --- Policy -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, arguments, expected",
    [
        ("float32", {}, None),
        ("float32", {"loss_scale": None}, None),
        ("float32", {"loss_scale": "dynamic"}, experimental.DynamicLossScale),
        ("mixed_float16", {}, experimental.DynamicLossScale),
        ("mixed_float16", {"loss_scale": None}, None),
        ("mixed_bfloat16", {}, None),
        ("float16", {"loss_scale": 2.0}, experimental.FixedLossScale),
    ],
    ids=["default", "none", "dynamic", "mixed-default", "mixed-none", "bfloat16", "fixed"],
)
def test_the_policys_loss_scale(name, arguments, expected):
    loss_scale = experimental.Policy(name, **arguments).loss_scale
    if expected is None:
        assert loss_scale is None
    else:
        assert type(loss_scale) is expected


def test_a_loss_scale_object_is_kept_as_given():
    loss_scale = experimental.DynamicLossScale()
    assert experimental.Policy("float32", loss_scale=loss_scale).loss_scale is loss_scale


@pytest.mark.parametrize("name", ["float32", "int8", "mixed_bfloat16"])
def test_repr_without_a_loss_scale(name):
    assert repr(experimental.Policy(name)) == f'<PolicyV1 "{name}", loss_scale=None>'


def test_repr_with_a_loss_scale():
    policy = experimental.Policy("float16", loss_scale=2.0)
    assert repr(policy) == '<PolicyV1 "float16", loss_scale=FixedLossScale(2.0)>'
    policy = experimental.Policy("mixed_float16")
    assert repr(policy).startswith('<PolicyV1 "mixed_float16", loss_scale=DynamicLossScale(')


def test_a_loss_scale_on_a_float32_policy_is_logged(tf_log):
    experimental.Policy("float32", loss_scale=2.0)
    assert tf_log == [
        "Creating a Policy with a loss scale is only useful for float16 policies. You passed "
        "loss_scale=2.0 for policy float32. Consider not passing any loss_scale instead."
    ]


@pytest.mark.parametrize("name", ["float16", "mixed_float16"])
def test_a_loss_scale_on_a_float16_policy_is_not_logged(tf_log, name):
    experimental.Policy(name, loss_scale=2.0)
    assert tf_log == []


@pytest.mark.parametrize("name", ["float32", "mixed_float16", "mixed_bfloat16"])
@pytest.mark.parametrize("loss_scale", [2.0, None], ids=["fixed", "none"])
def test_config_holds_the_name_and_the_loss_scale(name, loss_scale):
    policy = experimental.Policy(name, loss_scale=loss_scale)
    config = policy.get_config()
    assert config["name"] == name
    expected = {"class_name": "FixedLossScale", "config": {"loss_scale_value": 2.0}}
    assert config["loss_scale"] == (expected if loss_scale else None)
    assert repr(experimental.Policy.from_config(config)) == repr(policy)


# --- enable_mixed_precision_graph_rewrite -----------------------------------------------------


def test_the_rewrite_wraps_in_the_experimental_class_and_turns_grappler_on():
    optimizer = experimental.enable_mixed_precision_graph_rewrite(
        tf.keras.optimizers.SGD(1.0), 123.0
    )
    assert isinstance(optimizer, experimental.LossScaleOptimizer)
    assert (optimizer.dynamic, float(optimizer.loss_scale)) == (False, 123.0)
    assert _auto_mixed_precision()
    experimental.disable_mixed_precision_graph_rewrite()
    assert not _auto_mixed_precision()


def test_the_rewrite_refuses_a_loss_scale_optimizer_before_turning_anything_on():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        wrapped = experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), "dynamic")
    with pytest.raises(
        ValueError, match=r'^"opt" must not already be an instance of a LossScaleOptimizer\.'
    ):
        experimental.enable_mixed_precision_graph_rewrite(wrapped)
    assert not _auto_mixed_precision()


def test_the_rewrite_refuses_a_mixed_policy_and_takes_a_float_one():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    with pytest.raises(ValueError, match="the global Keras dtype Policy has been set"):
        experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(1.0))
    assert not _auto_mixed_precision()
    tf.keras.mixed_precision.set_global_policy("float64")
    experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(1.0))
    assert _auto_mixed_precision()


@pytest.mark.skipif(IS_KERAS_3, reason="Keras 3's set_global_policy reads no graph rewrite flag")
def test_after_the_rewrite_keras_2_refuses_a_mixed_policy():
    experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(1.0))
    with pytest.raises(
        ValueError,
        match=r'cannot be set to "mixed_float16", .* the mixed precision graph rewrite has '
        r"already been enabled",
    ):
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
    tf.keras.mixed_precision.set_global_policy("float64")  # not a mixed policy: allowed
