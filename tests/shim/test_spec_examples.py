"""What TensorFlow's API pages state about the loss scale optimizers (docs/reference.md), checked
with the inputs and numbers of their examples; the code is ours.

- spec 001 (the experimental class's page): SGD with learning rate 0.25 on `w**2` from `w = 1`
  gives 0.5 after one `minimize` and 0.25 after a further step written out with
  `get_scaled_loss` / `get_unscaled_gradients`; `apply_gradients` takes already aggregated
  gradients (`experimental_aggregate_gradients=False`) and a `name`.
- spec 004 (TF 2.4's page): each old construction (`"dynamic"`, the number 123, a
  `DynamicLossScale(2048, 500)`) and its new spelling give equal `get_config()`; the experimental
  class is a subclass of the new one and not the other way round.
"""

from __future__ import annotations

import warnings

import pytest
import tensorflow as tf
from packaging.version import Version

import compat_lso
import compat_lso.experimental
from compat_lso import _backend

from .conftest import KERAS2, NATIVE_LSO

# Keras 2.12 wrote its new optimizers' class_name under the "Custom>" package (its own loss
# scale optimizer too); 2.13 and later write "SGD".
SGD_NAME = "Custom>SGD" if KERAS2 and _backend.keras_version() < Version("2.13") else "SGD"


def _old(inner, loss_scale):
    """The experimental class, its deprecation warning set aside (test_deprecation.py has it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return compat_lso.experimental.LossScaleOptimizer(inner, loss_scale)


def _square_then_step_by_hand(optimizer):
    """spec 001's two steps on w = 1 with loss w**2 (gradient 2w), learning rate 0.25.

    Returns w after the `minimize` step, the scaled loss of the second step, and w after it.
    """
    w = tf.Variable(1.0)
    optimizer.minimize(lambda: w * w, var_list=w)  # a bare variable, as the page passes it
    after_minimize = float(w.numpy())
    with tf.GradientTape() as tape:
        scaled = optimizer.get_scaled_loss(w * w)
    (gradient,) = optimizer.get_unscaled_gradients(tape.gradient(scaled, [w]))
    optimizer.apply_gradients([(gradient, w)])
    return after_minimize, float(scaled), float(w.numpy())


# --- spec 001 ---------------------------------------------------------------------------------


def test_spec001_experimental_class_halves_w_twice(make_sgd):
    # TF 2.2/2.3's tf.keras.optimizers.SGD was today's legacy one: make_sgd runs both kinds.
    # 1 - 0.25 * 2 = 0.5, then 0.5 - 0.25 * 1 = 0.25.
    after_minimize, _, after_step = _square_then_step_by_hand(_old(make_sgd(0.25), "dynamic"))
    assert (after_minimize, after_step) == (0.5, 0.25)


def test_spec001_new_class_halves_w_twice(lso_cls, lso_kind, make_sgd, request):
    if lso_kind == "native" and make_sgd.kind == "new":
        # Keras 2's new optimizers (so the native LossScaleOptimizerV3) take no bare variable as
        # var_list; TF 2.4's OptimizerV2.minimize did, and the shim does.
        request.applymarker(
            pytest.mark.xfail(raises=TypeError, strict=True, reason="native Keras 2 limitation")
        )
    optimizer = lso_cls(make_sgd(0.25))
    after_minimize, scaled, after_step = _square_then_step_by_hand(optimizer)
    assert (after_minimize, after_step) == (0.5, 0.25)
    assert scaled == 0.5**2 * 2**15  # w**2 at the default initial scale
    assert int(optimizer.dynamic_counter.numpy()) == 2  # two good steps
    assert int(optimizer.iterations.numpy()) == 2


def test_spec001_apply_gradients_of_aggregated_gradients(lso_cls, make_sgd):
    optimizer = lso_cls(make_sgd(1.0), initial_scale=4, dynamic_growth_steps=1)
    a, b = tf.Variable(1.0), tf.Variable([2.0, 3.0])
    with tf.GradientTape() as tape:
        loss = 2.0 * a + tf.reduce_sum(b)
    summed = tf.distribute.get_replica_context().all_reduce("sum", tape.gradient(loss, [a, b]))
    optimizer.apply_gradients(
        [(summed[0], a), (summed[1], b)], experimental_aggregate_gradients=False
    )
    # One replica: the sums are the gradients, 2 and [1, 1], applied with learning rate 1.
    assert (float(a.numpy()), b.numpy().tolist()) == (-1.0, [1.0, 2.0])
    assert float(optimizer.loss_scale) == 8.0  # a good step doubles it (growth every step)
    assert int(optimizer.iterations.numpy()) == 1


def test_spec001_apply_gradients_takes_a_name(lso_cls, make_sgd):
    optimizer = lso_cls(make_sgd(1.0), dynamic=False, initial_scale=4)
    w = tf.Variable(1.0)
    optimizer.apply_gradients([(tf.constant(0.5), w)], name="named_step")
    assert float(w.numpy()) == 0.5


# --- spec 004: the old constructions and their new spelling -----------------------------------

# (id, the old loss_scale argument, the new keyword arguments, (dynamic, initial, growth)):
# the page's three conversions.
CONVERSIONS = [
    ("dynamic", lambda: "dynamic", {}, (True, 32768.0, 2000)),
    ("fixed_123", lambda: 123, {"dynamic": False, "initial_scale": 123}, (False, 123.0, None)),
    (
        "dynamic_loss_scale",
        lambda: tf.compat.v1.mixed_precision.DynamicLossScale(
            initial_loss_scale=2048, increment_period=500
        ),
        {"initial_scale": 2048, "dynamic_growth_steps": 500},
        (True, 2048.0, 500),
    ),
    (
        "compat_lso_dynamic_loss_scale",
        lambda: compat_lso.experimental.DynamicLossScale(
            initial_loss_scale=2048, increment_period=500
        ),
        {"initial_scale": 2048, "dynamic_growth_steps": 500},
        (True, 2048.0, 500),
    ),
]


@pytest.mark.parametrize(
    "old_loss_scale, new_arguments, expected",
    [pytest.param(*case[1:], id=case[0]) for case in CONVERSIONS],
)
def test_spec004_old_and_new_spellings_give_one_config(old_loss_scale, new_arguments, expected):
    old = _old(tf.keras.optimizers.SGD(), old_loss_scale())
    new = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(), **new_arguments)
    config = old.get_config()
    assert config == new.get_config()
    # The values the page states, by hand; SGD's default learning rate is 0.01.
    inner = config["inner_optimizer"]
    assert (config["dynamic"], config["initial_scale"], config["dynamic_growth_steps"]) == expected
    assert (inner["class_name"], inner["config"]["learning_rate"]) == (
        SGD_NAME,
        pytest.approx(0.01),
    )


@pytest.mark.parametrize(
    "old_loss_scale, new_arguments, expected",
    [pytest.param(*case[1:], id=case[0]) for case in CONVERSIONS[:3]],
)
def test_spec004_configs_have_the_tf24_form_with_either_inner_kind(
    make_sgd, old_loss_scale, new_arguments, expected
):
    config = _old(make_sgd(), old_loss_scale()).get_config()
    assert config == compat_lso.LossScaleOptimizer(make_sgd(), **new_arguments).get_config()
    assert set(config) == {"inner_optimizer", "dynamic", "initial_scale", "dynamic_growth_steps"}
    assert (config["dynamic"], config["initial_scale"], config["dynamic_growth_steps"]) == expected
    assert type(config["initial_scale"]) is float
    if KERAS2:
        # Keras 2's own class is the reference: the same config, inner optimizer included.
        assert config == NATIVE_LSO(make_sgd(), **new_arguments).get_config()


# --- spec 004: which class is an instance of which --------------------------------------------


def test_spec004_an_old_optimizer_is_an_instance_of_the_new_class(make_sgd):
    old = _old(make_sgd(), "dynamic")
    assert isinstance(old, compat_lso.LossScaleOptimizer)
    assert isinstance(old, tf.keras.mixed_precision.LossScaleOptimizer)
    assert issubclass(compat_lso.experimental.LossScaleOptimizer, compat_lso.LossScaleOptimizer)


def test_spec004_a_new_optimizer_is_no_instance_of_the_old_class(make_sgd):
    new = compat_lso.LossScaleOptimizer(make_sgd())
    assert not isinstance(new, compat_lso.experimental.LossScaleOptimizer)
    assert isinstance(new, tf.keras.mixed_precision.LossScaleOptimizer)
