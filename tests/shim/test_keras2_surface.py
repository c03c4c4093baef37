"""Keras 2's optimizer forms that old training code uses on a loss scale optimizer.

Each test runs against compat_lso's class and, on Keras 2 (TF 2.15, tf_keras), against Keras's
own class: the reference that fixes what the forms mean. Values are worked out by hand (SGD,
learning rate 0.5, momentum 0.9, one step of gradient 1: the variable moves by -0.5 and the
momentum slot holds -0.5 on every generation).

- `opt.variables()` (Horovod's `hvd.broadcast_variables(opt.variables(), root_rank=0)`): the
  inner optimizer's variables, step counter first, no loss scale state; on Keras 3
  `opt.variables` stays Keras 3's list.
- `opt.lr` / `opt.learning_rate`, read and assigned: the inner optimizer's learning rate.
- `opt.iterations = v` after the first step: refused on every generation.
- `minimize` with a callable loss and a callable `var_list`; `apply_gradients(...,
  experimental_aggregate_gradients=False)` on one replica.
- `weights`, `get_weights()`, `get_slot()`, ... : TF 2.15's default optimizer has none of them;
  on Keras 3 the AttributeError names Keras 3's spelling.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
import tensorflow as tf

from tests.shim.backend import IS_KERAS_3
from tests.shim.conftest import NEW_SGD, compat_cls


def _one_step(optimizer, variable):
    optimizer.apply_gradients([(tf.ones_like(variable), variable)])


def _value(variable):
    """A variable's value as a float; float() of a Keras variable fails before Keras 3.5."""
    return float(tf.keras.backend.get_value(variable))


def _called(variables):
    """`inner.variables` as a list: a method on OptimizerV2, a (callable) list since."""
    return list(variables() if callable(variables) else variables)


def test_variables_called_gives_the_inner_optimizers_variables(lso_cls, make_sgd):
    inner = make_sgd(0.5, momentum=0.9)
    optimizer = lso_cls(inner)
    variable = tf.Variable([1.0, 2.0])
    _one_step(optimizer, variable)

    called = optimizer.variables()  # what hvd.broadcast_variables(opt.variables(), 0) reads

    left_out = [v for v in _called(inner.variables) if all(v is not c for c in called)]
    # Keras 3 lists a constant learning rate among the inner optimizer's variables, Keras 2 not.
    assert left_out == ([inner.learning_rate] if IS_KERAS_3 else [])
    assert called[0] is optimizer.iterations
    assert not any(v is optimizer.dynamic_counter for v in called), "no loss scale state"
    slots = [v.numpy().tolist() for v in called if v.shape == variable.shape]
    assert slots == [[-0.5, -0.5]]
    assert variable.numpy().tolist() == [0.5, 1.5]


# `opt.variables()` after one step on `a` (shape [2]) and `b` (shape [3]) on TF 2.15's own class
# over its default (new) inner optimizer; tf_keras 2.21 gives the same. Made by this test under
# `nox -s "tests(tf215)"`, which checks the table against the native class on every run. Keras 2
# lists no learning rate (Keras 3 lists a constant one after the step counter) and no loss scale.
# OptimizerV2 (TF 2.4-2.10's default) names slots `SGD/a/momentum` and lists Adam's as m/a, m/b,
# v/a, v/b: Keras 3's optimizers are the heirs of TF 2.11-2.15's, and follow its order.
KERAS2_VARIABLES = {
    "sgd_momentum": ["iteration", "m/a", "m/b"],
    "adam": ["iteration", "m/a", "v/a", "m/b", "v/b"],
    "adam_amsgrad": ["iteration", "m/a", "v/a", "m/b", "v/b", "vhat/a", "vhat/b"],
    "sgd_schedule": ["iteration", "m/a", "m/b"],
    "sgd_ema": ["iteration", "average/a", "average/b", "m/a", "m/b"],
}


def _inner_optimizer(construction):
    optimizers = tf.keras.optimizers
    return {
        "sgd_momentum": lambda: optimizers.SGD(0.5, momentum=0.9),
        "adam": lambda: optimizers.Adam(0.5),
        "adam_amsgrad": lambda: optimizers.Adam(0.5, amsgrad=True),
        "sgd_schedule": lambda: optimizers.SGD(
            optimizers.schedules.ExponentialDecay(0.5, 10, 0.9), momentum=0.9
        ),
        "sgd_ema": lambda: optimizers.SGD(0.5, momentum=0.9, use_ema=True),
    }[construction]()


# Keras 3's slot names (`a_0_momentum`: variable `a:0`, slot `momentum`) in Keras 2's (`m/a`).
_KERAS_3_SLOTS = {"momentum": "m", "velocity": "v", "velocity_hat": "vhat", "average": "average"}


def _keras2_name(variable):
    # Keras 2.12 names slots under the optimizer's name scope (`SGD/m/a`), 2.13-2.15 do not.
    name = re.sub(r"^(SGD|Adam)/", "", variable.name.removesuffix(":0"))
    keras_3_slot = re.fullmatch(r"(?P<of>[a-z])_0_(?P<slot>\w+)", name)
    if keras_3_slot is None:
        return name
    return f"{_KERAS_3_SLOTS[keras_3_slot['slot']]}/{keras_3_slot['of']}"


@pytest.mark.parametrize("construction", sorted(KERAS2_VARIABLES))
def test_variables_called_are_keras_2s_list_in_its_order(lso_cls, construction):
    inner = _inner_optimizer(construction)
    optimizer = lso_cls(inner)
    a, b = tf.Variable([1.0, 2.0], name="a"), tf.Variable([1.0, 2.0, 3.0], name="b")
    assert [_keras2_name(v) for v in optimizer.variables()] == ["iteration"]  # before a step

    optimizer.apply_gradients([(tf.ones_like(a), a), (tf.ones_like(b), b)])

    called = optimizer.variables()
    assert [_keras2_name(v) for v in called] == KERAS2_VARIABLES[construction]
    inner_ids = [id(v) for v in _called(inner.variables)]
    assert all(id(v) in inner_ids for v in called), "the inner optimizer's own variables"
    positions = [inner_ids.index(id(v)) for v in called]
    assert positions == sorted(positions), "in the inner optimizer's order"


def test_variables_called_in_a_tf_function(lso_cls, make_sgd):
    optimizer = lso_cls(make_sgd(0.5, momentum=0.9))
    variable = tf.Variable([1.0, 2.0])
    _one_step(optimizer, variable)

    @tf.function
    def broadcast_like():  # Horovod broadcasts inside a tf.function
        return [tf.identity(v) for v in optimizer.variables()]

    assert [v.numpy().tolist() for v in broadcast_like()] == [
        v.numpy().tolist() for v in optimizer.variables()
    ]


@pytest.mark.skipif(not IS_KERAS_3, reason="Keras 3's list form (Keras 2 has its own list)")
def test_variables_stays_keras_3s_list():
    import keras

    optimizer = compat_cls()(keras.optimizers.SGD(0.5, momentum=0.9))
    native = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.5, momentum=0.9))
    for each in (optimizer, native):
        _one_step(each, tf.Variable([1.0, 2.0]))

    keras_3_list = optimizer.variables
    assert isinstance(keras_3_list, list)
    assert [v.name for v in keras_3_list] == [v.name for v in native.variables]
    assert len(keras_3_list) == len(native.variables) > len(optimizer.variables())
    assert any(v is optimizer.dynamic_scale for v in keras_3_list)


@pytest.mark.parametrize("attribute", ["lr", "learning_rate"])
def test_learning_rate_read_and_assigned_through_the_wrapper(lso_cls, make_sgd, attribute):
    inner = make_sgd(0.5)
    optimizer = lso_cls(inner)
    assert float(tf.keras.backend.get_value(getattr(optimizer, attribute))) == 0.5

    setattr(optimizer, attribute, 0.125)
    variable = tf.Variable([1.0])
    _one_step(optimizer, variable)

    assert _value(inner.learning_rate) == _value(getattr(optimizer, attribute)) == 0.125
    assert variable.numpy().tolist() == [0.875]


def test_set_value_and_get_value_on_lr(lso_cls, make_sgd):
    # Horovod's elastic Keras example: `tf.keras.backend.set_value(model.optimizer.lr, v)`.
    inner = make_sgd(0.5)
    optimizer = lso_cls(inner)
    assert float(tf.keras.backend.get_value(optimizer.lr)) == 0.5

    tf.keras.backend.set_value(optimizer.lr, 0.125)
    variable = tf.Variable([1.0])
    _one_step(optimizer, variable)

    assert float(tf.keras.backend.get_value(optimizer.lr)) == 0.125
    assert _value(inner.learning_rate) == _value(optimizer.learning_rate) == 0.125
    assert variable.numpy().tolist() == [0.875]


def test_iterations_cannot_be_replaced_after_the_first_step(lso_cls, make_sgd):
    optimizer = lso_cls(make_sgd(0.5))
    _one_step(optimizer, tf.Variable([1.0]))
    # Keras 2.15: RuntimeError ("Cannot set `iterations` ... after ... apply_gradients()");
    # legacy OptimizerV2: RuntimeError too; Keras 3: AttributeError.
    with pytest.raises((RuntimeError, AttributeError)):
        optimizer.iterations = tf.Variable(7, dtype=tf.int64)
    assert int(optimizer.iterations.numpy()) == 1


@pytest.mark.skipif(not IS_KERAS_3, reason="Keras 2.15 let it replace the counter before a step")
def test_iterations_assignment_names_the_fix_on_keras_3():
    optimizer = compat_cls()(NEW_SGD(0.5))
    with pytest.raises(AttributeError, match=r"opt\.iterations\.assign\(n\)"):
        optimizer.iterations = tf.Variable(7, dtype=tf.int64)


@pytest.mark.parametrize("var_list_form", ["callable", "list"])
def test_minimize_with_a_callable_loss(lso_cls, make_sgd, var_list_form):
    optimizer = lso_cls(make_sgd(0.5))
    variable = tf.Variable([1.0, 2.0])
    var_list = (lambda: [variable]) if var_list_form == "callable" else [variable]

    optimizer.minimize(lambda: tf.reduce_sum(variable * 3.0), var_list=var_list)

    assert variable.numpy().tolist() == [-0.5, 0.5]  # 3 * 0.5 off each
    assert int(optimizer.iterations.numpy()) == 1


def test_apply_gradients_without_aggregation_on_one_replica(lso_cls, make_sgd):
    optimizer = lso_cls(make_sgd(0.5))
    variable = tf.Variable([1.0])
    optimizer.apply_gradients(
        [(tf.constant([2.0]), variable)], experimental_aggregate_gradients=False
    )
    assert variable.numpy().tolist() == [0.0]


def test_the_private_inner_optimizer_name(lso_cls, make_sgd):
    # NVIDIA's BERT trainer logs `optimizer._optimizer._decayed_lr('float32')`.
    inner = make_sgd(0.5)
    assert lso_cls(inner)._optimizer is inner


REFUSED = ["weights", "get_weights", "get_slot", "get_slot_names", "add_slot", "_decayed_lr"]


@pytest.mark.parametrize("name", REFUSED)
def test_optimizer_v2_forms_are_missing_as_on_tf_2_15(lso_cls, name):
    # TF 2.15's default optimizer (Keras 2.11's new one) no longer had these; OptimizerV2 did.
    optimizer = lso_cls(NEW_SGD(0.5))
    _one_step(optimizer, tf.Variable([1.0]))
    assert not hasattr(optimizer, name)
    if IS_KERAS_3:
        with pytest.raises(AttributeError, match=r"on Keras 3.*: .*(opt|inner)"):
            getattr(optimizer, name)


# OptimizerV2.get_gradients on the wrapper (OpenNMT-tf calls it inside a tf.function): TF
# 2.4-2.10's meaning is tf.gradients of the scaled loss, unscaled, and nothing clipped (clipping is
# apply_gradients'). The model: w = [1, 1] (float32), loss = float32(sum(float16(w) * x)) with x in
# float16, so the gradient is x, carried through float16 times the scale: 2**15 * 4 = 2**17 is
# inf in float16 (the largest is 65504), 2**15 * 1 is not. Worked out by hand:
_OVERFLOWS, _FITS = [4.0, 1.0], [1.0, 0.5]
# Step 1 (x = _OVERFLOWS): gradients [inf, 1], skipped, the scale halves to 2**14. Step 2 (x =
# _FITS, 2**14 * x exact in float16): gradients [1, 0.5] as taken, unclipped; SGD(0.1, clipnorm=0.5)
# applies them clipped to norm 0.5: w -= 0.1 * [1, 0.5] * 0.5 / sqrt(1.25).
_CLIPPED_STEP = [0.1 * g * 0.5 / 1.25**0.5 for g in _FITS]
_AFTER = [1.0 - d for d in _CLIPPED_STEP]  # [0.95527864, 0.97763932]


def _get_gradients_reference(lso_cls, make_sgd):
    """Whether this class and inner optimizer have get_gradients: Keras 2's own wrapper of a new
    optimizer (TF 2.11-2.15's default) has none, its wrapper of an OptimizerV2 has (the
    reference); compat_lso's has it over either, on every generation."""
    return lso_cls is compat_cls() or make_sgd.kind == "legacy"


def test_get_gradients_is_tf_2_4s_inside_a_tf_function(lso_cls, make_sgd):
    optimizer = lso_cls(make_sgd(0.1, clipnorm=0.5))
    if not _get_gradients_reference(lso_cls, make_sgd):
        assert not hasattr(optimizer, "get_gradients")
        return
    w = tf.Variable([1.0, 1.0])

    @tf.function
    def step(x):  # OpenNMT-tf's training step, without its model
        loss = tf.cast(tf.reduce_sum(tf.cast(w, tf.float16) * x), tf.float32)
        grads = optimizer.get_gradients(loss, [w])
        optimizer.apply_gradients([(grads[0], w)])  # no zip(strict=): TF 2.12's autograph
        return grads

    overflowed = step(tf.constant(_OVERFLOWS, tf.float16))
    assert overflowed[0].numpy().tolist() == [float("inf"), 1.0]
    assert w.numpy().tolist() == [1.0, 1.0], "the step with inf gradients is skipped"
    assert float(optimizer.loss_scale) == 2.0**14

    taken = step(tf.constant(_FITS, tf.float16))
    assert taken[0].numpy().tolist() == _FITS, "unscaled, and not clipped"
    assert w.numpy() == pytest.approx(_AFTER, rel=1e-6), "clipped when applied"
    assert float(optimizer.loss_scale) == 2.0**14


def test_get_gradients_refuses_a_variable_the_loss_does_not_depend_on(lso_cls, make_sgd):
    optimizer = lso_cls(make_sgd(0.1))
    if not _get_gradients_reference(lso_cls, make_sgd):
        pytest.skip("Keras 2's own wrapper of a new optimizer has no get_gradients")
    w, unused = tf.Variable([1.0]), tf.Variable([1.0], name="unused")

    @tf.function
    def gradients():
        return optimizer.get_gradients(tf.reduce_sum(w * 3.0), [w, unused])

    with pytest.raises(ValueError, match=r"unused.* has `None` for gradient"):
        gradients()


def test_get_gradients_eagerly_is_a_value_error(lso_cls, make_sgd):
    # OptimizerV2's tf.gradients ran in Keras's graph, with no path to the eager loss: a
    # ValueError that the gradient is None. compat_lso's names the fix.
    optimizer = lso_cls(make_sgd(0.1))
    if not _get_gradients_reference(lso_cls, make_sgd):
        pytest.skip("Keras 2's own wrapper of a new optimizer has no get_gradients")
    w = tf.Variable([1.0])
    match = "GradientTape" if lso_cls is compat_cls() else "has `None` for gradient"
    with pytest.raises(ValueError, match=match):
        optimizer.get_gradients(tf.reduce_sum(w * 3.0), [w])


def test_set_weights_with_keras_2s_list_is_refused(lso_cls):
    # Keras 2.15's wrapper checks its own (never set) built flag: it refused every call. Keras 3's
    # sets the wrapper's own variables from the first values and ignores the rest, so a list of
    # the inner optimizer's state (what TF 2.4-2.10's set_weights took) would land silently on
    # the step counter and the loss scale.
    optimizer = lso_cls(NEW_SGD(0.5, momentum=0.9))
    _one_step(optimizer, tf.Variable([1.0, 2.0]))
    keras_2_list = [v.numpy() for v in optimizer.variables()]
    match = "not yet been built" if not IS_KERAS_3 else r"opt\.inner_optimizer\.set_weights"
    with pytest.raises(ValueError, match=match):
        optimizer.set_weights(keras_2_list)


@pytest.mark.skipif(not IS_KERAS_3, reason="Keras 2.15's wrapper refuses every set_weights")
def test_set_weights_with_the_wrappers_own_values_is_keras_3s():
    optimizer = compat_cls()(NEW_SGD(0.5, momentum=0.9))
    _one_step(optimizer, tf.Variable([1.0, 2.0]))
    own = optimizer._variables
    optimizer.set_weights([v.numpy() * 0 + 3 for v in own])
    assert [float(v.numpy()) for v in own] == [3.0] * len(own)


# --- OptimizerV2's hyperparameters and the delegated settings, set on the wrapper --------------
#
# TF 2.4-2.10's wrapper (TF 2.15's over a legacy OptimizerV2, the reference here) read and set
# `opt.momentum` and OptimizerV2's other hyperparameters on the inner optimizer, which kept them
# in variables that a traced step reads. TF 2.11-2.15's wrapper of the new optimizer kept such an
# assignment on the wrapper, where nothing read it (checked below as the fact it is). The shim on
# Keras 3 sets the inner optimizer's, a Python number that a traced step bakes in: set after a
# traced step, it warns.


def _kept_on_the_wrapper(kind):
    """TF 2.11-2.15's wrapper of the new optimizer (and tf_keras's): no hyperparameters."""
    return not IS_KERAS_3 and kind == "new"


def _number(value):
    return value if isinstance(value, (int, float)) else _value(value)


def test_momentum_set_on_the_wrapper_is_the_inner_optimizers(lso_cls, make_sgd):
    inner = make_sgd(1.0, momentum=0.5)
    optimizer = lso_cls(inner)
    var = tf.Variable(0.0)
    _one_step(optimizer, var)  # slot 0.5 * 0 - 1 = -1, var -1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no step was traced: nothing to warn about
        optimizer.momentum = 0.0
    _one_step(optimizer, var)
    if _kept_on_the_wrapper(make_sgd.kind):
        assert _number(inner.momentum) == 0.5
        assert float(var.numpy()) == -2.5  # slot 0.5 * -1 - 1
        return
    assert _number(optimizer.momentum) == _number(inner.momentum) == 0.0
    assert float(var.numpy()) == -2.0  # slot 0 * -1 - 1


def test_momentum_set_after_a_traced_step(lso_cls, make_sgd):
    inner = make_sgd(1.0, momentum=0.5)
    optimizer = lso_cls(inner)
    var = tf.Variable(0.0)
    traced = tf.function(lambda: _one_step(optimizer, var))
    traced()  # slot -1, var -1
    if IS_KERAS_3:
        with pytest.warns(
            UserWarning,
            match=r"^opt\.momentum = 0\.0 is set on the inner optimizer, but a step of this "
            r"optimizer traced before .* keeps the momentum it was traced with: .*"
            r"model\.make_train_function\(force=True\)",
        ) as warned:
            optimizer.momentum = 0.0
        assert warned[0].filename == __file__  # at the assignment
    else:
        optimizer.momentum = 0.0
    traced()
    tf.function(lambda: _one_step(optimizer, var))()  # a new trace
    if IS_KERAS_3:  # the old trace keeps 0.5 (slot -1.5), the new one takes 0 (slot -1)
        assert float(var.numpy()) == -3.5
    elif make_sgd.kind == "legacy":  # a variable: both traces read 0 (slots -1, -1)
        assert float(var.numpy()) == -3.0
    else:  # kept on the wrapper: slots -1.5, -1.75
        assert float(var.numpy()) == -4.25


@pytest.mark.skipif(not IS_KERAS_3, reason="Keras 2's hyperparameters are variables: no warning")
def test_momentum_set_after_model_fit_traced_the_step():
    optimizer = compat_cls()(NEW_SGD(0.5, momentum=0.9))
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=optimizer, loss="mse")
    model.fit(tf.ones([2, 1]), tf.ones([2, 1]), epochs=1, verbose=0)
    with pytest.warns(UserWarning, match=r"^opt\.momentum = 0\.5 .*\(Model\.fit's train function"):
        model.optimizer.momentum = 0.5  # a Keras 2 momentum schedule callback's assignment
    assert optimizer.inner_optimizer.momentum == 0.5


@pytest.mark.parametrize("optimizer_name", ["SGD", "RMSprop"])
def test_momentum_set_on_an_optimizer_built_without(lso_cls, inner_kind, optimizer_name):
    # Keras 2's OptimizerV2 SGD and RMSprop decide at construction whether to apply momentum:
    # one set later is ignored. Keras 3's decide when they build: the shim's applies it, and warns.
    optimizers = tf.keras.optimizers if inner_kind == "new" else tf.keras.optimizers.legacy
    make = getattr(optimizers, optimizer_name)
    results = {}
    for case in ("built with none", "set later", "built with it"):
        optimizer = lso_cls(make(0.5, momentum=0.9 if case == "built with it" else 0.0))
        if case == "set later" and IS_KERAS_3:
            with pytest.warns(
                UserWarning,
                match=rf"^opt\.momentum = 0\.9 turns momentum on for a {optimizer_name} built with "
                r"momentum=0: .* build the inner optimizer with momentum=0\.9$",
            ):
                optimizer.momentum = 0.9
        elif case == "set later":
            optimizer.momentum = 0.9
        var = tf.Variable(1.0)
        for _ in range(3):
            _one_step(optimizer, var)
        results[case] = float(var.numpy())
    assert results["built with it"] != results["built with none"]
    expected = "built with it" if IS_KERAS_3 else "built with none"
    assert results["set later"] == results[expected]


HYPERPARAMETERS = [
    ("RMSprop", "rho", 0.5),
    ("RMSprop", "momentum", 0.5),
    ("Adam", "beta_1", 0.5),
    ("Adam", "beta_2", 0.5),
    ("Adamax", "beta_1", 0.5),
    ("Nadam", "beta_2", 0.5),
    ("Adadelta", "rho", 0.5),
    ("Ftrl", "beta", 0.5),
    ("Ftrl", "learning_rate_power", -0.25),
    ("Ftrl", "l1_regularization_strength", 0.5),
    ("Ftrl", "l2_regularization_strength", 0.5),
]


@pytest.mark.parametrize(("optimizer_name", "name", "value"), HYPERPARAMETERS)
def test_a_hyperparameter_set_on_the_wrapper(lso_cls, inner_kind, optimizer_name, name, value):
    optimizers = tf.keras.optimizers if inner_kind == "new" else tf.keras.optimizers.legacy
    # Momentum on an optimizer made without: test_momentum_set_on_an_optimizer_built_without.
    inner = getattr(optimizers, optimizer_name)(
        0.5, **({"momentum": 0.25} if name == "momentum" else {})
    )
    optimizer = lso_cls(inner)
    before = _number(getattr(inner, name))
    setattr(optimizer, name, value)
    assert _number(getattr(optimizer, name)) == value
    assert _number(getattr(inner, name)) == (before if _kept_on_the_wrapper(inner_kind) else value)


def test_a_name_the_inner_optimizer_lacks_stays_on_the_wrapper(lso_cls, make_sgd):
    inner = make_sgd(1.0)
    optimizer = lso_cls(inner)
    optimizer.beta_1 = 0.5  # not one of SGD's: Keras 2 kept it on the wrapper too
    assert optimizer.beta_1 == 0.5
    assert not hasattr(inner, "beta_1")


def test_decay_set_on_the_wrapper_does_nothing(lso_cls, make_sgd):
    # TF 2.15's OptimizerV2 decays by the decay it was built with (`_initial_decay`), and its new
    # optimizer has none: no Keras 2 optimizer applied one set later. Keras 3's have none either;
    # the shim says so.
    optimizer = lso_cls(make_sgd(1.0))
    var = tf.Variable(0.0)
    if IS_KERAS_3:
        with pytest.warns(
            UserWarning,
            match=r"^opt\.decay = 0\.5 has no effect: .* For Keras 2's decay, build the inner "
            r"optimizer with learning_rate=keras\.optimizers\.schedules\.InverseTimeDecay\("
            r"rate, decay_steps=1, decay_rate=0\.5\)$",
        ):
            optimizer.decay = 0.5
    else:
        optimizer.decay = 0.5
    assert _number(optimizer.decay) == 0.5
    _one_step(optimizer, var)
    _one_step(optimizer, var)
    assert float(var.numpy()) == -2.0


def test_the_decay_fix_trains_as_keras_2s_decay(lso_cls, make_sgd):
    if IS_KERAS_3:  # the schedule the warning names
        schedule = tf.keras.optimizers.schedules.InverseTimeDecay(1.0, 1, 0.5)
        optimizer = lso_cls(NEW_SGD(schedule))
    elif make_sgd.kind == "legacy":
        optimizer = lso_cls(make_sgd(1.0, decay=0.5))  # Keras 2's decay, built in
    else:
        pytest.skip("TF 2.11-2.15's new optimizer has no decay")
    var = tf.Variable(0.0)
    _one_step(optimizer, var)
    _one_step(optimizer, var)
    assert float(var.numpy()) == pytest.approx(-1.0 - 1.0 / 1.5)  # rates 1 / (1 + 0.5 * step)


@pytest.mark.parametrize("setting", ["clipnorm", "global_clipnorm", "clipvalue"])
def test_clipping_set_after_a_traced_step_reaches_later_traces(lso_cls, make_sgd, setting):
    # Keras 2's optimizers read clipping at trace time too (as Python values): the traced step
    # keeps what it was traced with, a new trace clips. Keras 3: the same, with a warning.
    optimizer = lso_cls(make_sgd(1.0))
    var = tf.Variable(0.0)

    def step():
        optimizer.apply_gradients([(tf.constant(10.0), var)])

    traced = tf.function(step)
    traced()
    if IS_KERAS_3:
        with pytest.warns(UserWarning, match=rf"^opt\.{setting} = 1\.0 is set on the inner"):
            setattr(optimizer, setting, 1.0)
    else:
        setattr(optimizer, setting, 1.0)
    traced()
    assert float(var.numpy()) == -20.0
    tf.function(step)()
    # TF 2.11-2.15's wrapper of the new optimizer keeps clipping on the wrapper and never applies
    # it; TF 2.4's (and the legacy one's), like the shim, set the inner optimizer's.
    assert float(var.numpy()) == (-30.0 if _kept_on_the_wrapper(make_sgd.kind) else -21.0)


def test_loss_scale_cannot_be_set_through_the_wrapper(lso_cls, make_sgd):
    # Keras 2.8: `lso.loss_scale = x` is an AttributeError, even where the inner optimizer has a
    # hyperparameter of that name (OptimizerV2's `_set_hyper`), which keeps its value.
    base: Any = make_sgd.cls

    class WithLossScale(base):
        def __init__(self):
            super().__init__()
            if make_sgd.kind == "legacy":
                self._set_hyper("loss_scale", 123.0)
            else:
                self.loss_scale = 123.0

    inner = WithLossScale()
    optimizer = lso_cls(inner, dynamic=False, initial_scale=4.0)
    with pytest.raises(AttributeError):
        optimizer.loss_scale = 2.0
    assert float(optimizer.loss_scale) == 4.0
    assert _value(inner.loss_scale) == 123.0
