"""The examples of TensorFlow's API pages (summed up in docs/reference.md), verbatim but for the
import.

- spec 001 (``tf.keras.mixed_precision.experimental.LossScaleOptimizer`` page): the ``minimize``
  example ends at 0.5, the GradientTape example continuing it ends at 0.25.
- spec 004 (TF 2.4 page): the three old->new conversions give equal ``get_config()``; the
  isinstance statements hold, with the native ``tf.keras.mixed_precision.LossScaleOptimizer`` too.

Import adaptations: ``tf.keras.mixed_precision.experimental.LossScaleOptimizer`` ->
``compat_lso.experimental.LossScaleOptimizer``; ``tf.keras.mixed_precision.LossScaleOptimizer`` ->
``compat_lso.LossScaleOptimizer``; ``tf.compat.v1.mixed_precision.experimental.DynamicLossScale``
(removed in TF 2.9) -> ``tf.compat.v1.mixed_precision.DynamicLossScale`` and the shim's own
``compat_lso.experimental.DynamicLossScale``.
"""

from __future__ import annotations

import pytest
import tensorflow as tf
from packaging.version import Version

import compat_lso
import compat_lso.experimental
from compat_lso import _backend

from .conftest import KERAS2, NATIVE_LSO

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# The inner SGD's `class_name` as this Keras writes it: Keras 2.12 wrote its new optimizers under
# the "Custom>" package (its own LossScaleOptimizer does too); 2.13 and later write "SGD".
SGD_CLASS_NAME = "Custom>SGD" if KERAS2 and _backend.keras_version() < Version("2.13") else "SGD"

DYNAMIC_LOSS_SCALE_CLASSES = [
    pytest.param(lambda: tf.compat.v1.mixed_precision.DynamicLossScale, id="tf_compat_v1"),
    pytest.param(lambda: compat_lso.experimental.DynamicLossScale, id="compat_lso"),
]


# --- spec 001 ---------------------------------------------------------------------------------


def test_spec001_minimize_example_ends_at_half(make_sgd):
    # In TF 2.2/2.3 tf.keras.optimizers.SGD was the (now legacy) OptimizerV2 SGD: run both.
    opt = make_sgd(0.25)
    opt = compat_lso.experimental.LossScaleOptimizer(opt, "dynamic")
    var = tf.Variable(1.0)
    loss_fn = lambda: var**2  # noqa: E731
    # 'minimize' applies loss scaling to the loss and updates the loss sale.
    opt.minimize(loss_fn, var_list=var)
    assert var.numpy() == 0.5

    # The GradientTape continuation of the same example.
    with tf.GradientTape() as tape:
        loss = loss_fn()
        scaled_loss = opt.get_scaled_loss(loss)
    scaled_grad = tape.gradient(scaled_loss, var)
    (grad,) = opt.get_unscaled_gradients([scaled_grad])
    opt.apply_gradients([(grad, var)])  # Loss scale is updated here
    assert var.numpy() == 0.25


def test_spec001_examples_with_the_non_experimental_class(lso_cls, lso_kind, make_sgd, request):
    # The same two examples through the TF 2.4 class (and, on Keras 2, the native one).
    if lso_kind == "native" and make_sgd.kind == "new":
        # Keras 2's new optimizers (and so the native LossScaleOptimizerV3) refuse a bare
        # variable as var_list; TF 2.4's OptimizerV2.minimize flattened it. The shim must not.
        request.applymarker(
            pytest.mark.xfail(raises=TypeError, strict=True, reason="native Keras 2 limitation")
        )
    opt = make_sgd(0.25)
    opt = lso_cls(opt)
    var = tf.Variable(1.0)
    loss_fn = lambda: var**2  # noqa: E731
    opt.minimize(loss_fn, var_list=var)
    assert var.numpy() == 0.5

    with tf.GradientTape() as tape:
        loss = loss_fn()
        scaled_loss = opt.get_scaled_loss(loss)
    # The scaled loss really is scaled, by the default initial scale.
    assert float(scaled_loss) == 0.25 * 32768.0
    scaled_grad = tape.gradient(scaled_loss, var)
    (grad,) = opt.get_unscaled_gradients([scaled_grad])
    opt.apply_gradients([(grad, var)])  # Loss scale is updated here
    assert var.numpy() == 0.25
    assert int(opt.dynamic_counter.numpy()) == 2
    assert int(opt.iterations.numpy()) == 2


# --- spec 004: the three conversions ---------------------------------------------------------


def _by_hand(config: dict) -> tuple:
    """The loss-scaling settings and the inner optimizer's class and learning rate, to compare
    with the values the TF 2.4 page states (not only one shim class with the other)."""
    inner = config["inner_optimizer"]
    return (
        config["dynamic"],
        config["initial_scale"],
        config["dynamic_growth_steps"],
        inner["class_name"],
        inner["config"]["learning_rate"],
    )


def test_spec004_conversion_dynamic_string():
    # In all of the the examples below, `opt1` and `opt2` are identical
    opt1 = compat_lso.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(), loss_scale="dynamic"
    )
    opt2 = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD())
    assert opt1.get_config() == opt2.get_config()
    # "dynamic": the defaults, 2**15 and 2000; SGD's default learning rate is 0.01.
    assert _by_hand(opt1.get_config()) == (True, 32768.0, 2000, SGD_CLASS_NAME, pytest.approx(0.01))


def test_spec004_conversion_fixed_number():
    opt1 = compat_lso.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), loss_scale=123)
    # dynamic=False indicates to use fixed loss scaling. initial_scale=123
    # refers to the initial loss scale, which is the single fixed loss scale
    # when dynamic=False.
    opt2 = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.SGD(), dynamic=False, initial_scale=123
    )
    assert opt1.get_config() == opt2.get_config()
    assert _by_hand(opt1.get_config()) == (False, 123.0, None, SGD_CLASS_NAME, pytest.approx(0.01))


@pytest.mark.parametrize("dynamic_loss_scale_cls", DYNAMIC_LOSS_SCALE_CLASSES)
def test_spec004_conversion_dynamic_loss_scale(dynamic_loss_scale_cls):
    loss_scale = dynamic_loss_scale_cls()(initial_loss_scale=2048, increment_period=500)
    opt1 = compat_lso.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(), loss_scale=loss_scale
    )
    opt2 = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.SGD(), initial_scale=2048, dynamic_growth_steps=500
    )
    assert opt1.get_config() == opt2.get_config()
    assert _by_hand(opt1.get_config()) == (True, 2048.0, 500, SGD_CLASS_NAME, pytest.approx(0.01))


@pytest.mark.parametrize(
    "make_loss_scale, new_kwargs, expected",
    [
        (lambda: "dynamic", {}, (True, 32768.0, 2000)),
        (lambda: 123, {"dynamic": False, "initial_scale": 123}, (False, 123.0, None)),
        (
            lambda: tf.compat.v1.mixed_precision.DynamicLossScale(2048, 500),
            {"initial_scale": 2048, "dynamic_growth_steps": 500},
            (True, 2048.0, 500),
        ),
    ],
    ids=["dynamic", "fixed_123", "dynamic_loss_scale"],
)
def test_spec004_conversions_configs_have_the_tf24_form(
    make_sgd, make_loss_scale, new_kwargs, expected
):
    old_kwargs = {"loss_scale": make_loss_scale()}
    opt1 = compat_lso.experimental.LossScaleOptimizer(make_sgd(), **old_kwargs)
    opt2 = compat_lso.LossScaleOptimizer(make_sgd(), **new_kwargs)
    config = opt1.get_config()
    assert config == opt2.get_config()
    assert set(config) == {"inner_optimizer", "dynamic", "initial_scale", "dynamic_growth_steps"}
    assert (config["dynamic"], config["initial_scale"], config["dynamic_growth_steps"]) == expected
    assert type(config["initial_scale"]) is float
    if KERAS2:
        # On Keras 2 the native class is the reference: same config, inner optimizer included.
        assert config == NATIVE_LSO(make_sgd(), **new_kwargs).get_config()


# --- spec 004: isinstance ---------------------------------------------------------------------


def test_spec004_experimental_class_subclasses_the_non_experimental_class(make_sgd):
    opt1 = compat_lso.experimental.LossScaleOptimizer(make_sgd(), loss_scale="dynamic")
    # The experimental class subclasses the non-experimental class
    assert isinstance(opt1, compat_lso.LossScaleOptimizer) is True
    assert isinstance(opt1, tf.keras.mixed_precision.LossScaleOptimizer) is True
    assert issubclass(compat_lso.experimental.LossScaleOptimizer, compat_lso.LossScaleOptimizer)


def test_spec004_non_experimental_class_does_not_subclass_the_experimental_class(make_sgd):
    opt2 = compat_lso.LossScaleOptimizer(make_sgd())
    # The non-experimental class does NOT subclass the experimental class.
    assert isinstance(opt2, compat_lso.experimental.LossScaleOptimizer) is False
    assert isinstance(opt2, tf.keras.mixed_precision.LossScaleOptimizer) is True


# --- spec 001: the apply_gradients example ----------------------------------------------------


def test_spec001_apply_gradients_example_with_aggregation_keyword(lso_cls, make_sgd):
    optimizer = lso_cls(make_sgd(1.0), initial_scale=4, dynamic_growth_steps=1)
    vars = [tf.Variable(1.0), tf.Variable([2.0, 3.0])]
    with tf.GradientTape() as tape:
        loss = vars[0] * 2.0 + tf.reduce_sum(vars[1])
    grads = tape.gradient(loss, vars)
    grads = tf.distribute.get_replica_context().all_reduce("sum", grads)
    # Processing aggregated gradients.
    optimizer.apply_gradients(zip(grads, vars, strict=True), experimental_aggregate_gradients=False)
    assert vars[0].numpy() == -1.0
    assert vars[1].numpy().tolist() == [1.0, 2.0]
    assert float(optimizer.loss_scale) == 8.0
    assert int(optimizer.iterations.numpy()) == 1


def test_spec001_apply_gradients_accepts_the_name_argument(lso_cls, make_sgd):
    # "name: Optional name for the returned operation."
    optimizer = lso_cls(make_sgd(1.0), dynamic=False, initial_scale=4)
    var = tf.Variable(1.0)
    optimizer.apply_gradients([(tf.constant(0.5), var)], name="my_apply")
    assert var.numpy() == 0.5
