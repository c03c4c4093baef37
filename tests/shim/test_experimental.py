"""``compat_lso.experimental.LossScaleOptimizer(optimizer, loss_scale)``, TF 2.2/2.3's constructor.

The reference for translating ``loss_scale`` is the old class's own constructor, which survives
in TensorFlow's internal legacy copy
``tensorflow.python.keras.mixed_precision.loss_scale_optimizer.LossScaleOptimizerV1`` (it works
with ``tensorflow.python.keras`` optimizers only; present in TF 2.15 and 2.21): every translation
below is checked against it as well as against the expected values.
"""

from __future__ import annotations

import inspect
import math
import re
import warnings

import pytest
import tensorflow as tf

import compat_lso
import compat_lso.experimental

from .conftest import KERAS2, NATIVE_LSO

try:  # TensorFlow's internal copy of the TF 2.4 Keras mixed-precision code (reference only)
    from tensorflow.python.keras.mixed_precision import loss_scale_optimizer as _tf_legacy_lso
    from tensorflow.python.keras.optimizer_v2 import gradient_descent as _tf_legacy_sgd
except ImportError:  # pragma: no cover
    _tf_legacy_lso = _tf_legacy_sgd = None

TF_FIXED = tf.compat.v1.mixed_precision.FixedLossScale
TF_DYNAMIC = tf.compat.v1.mixed_precision.DynamicLossScale


def _ours(name):
    return lambda *a, **k: getattr(compat_lso.experimental, name)(*a, **k)


def _tfs(cls):
    return lambda *a, **k: cls(*a, **k)


# (id, make loss_scale, same loss_scale for the TF reference, expected (dynamic, initial, growth))
TRANSLATIONS = [
    ("dynamic_string", lambda: "dynamic", lambda: "dynamic", (True, 32768.0, 2000)),
    ("int", lambda: 123, lambda: 123, (False, 123.0, None)),
    ("float", lambda: 5.5, lambda: 5.5, (False, 5.5, None)),
    ("int_one", lambda: 1, lambda: 1, (False, 1.0, None)),
    ("tf_fixed", lambda: TF_FIXED(8), lambda: TF_FIXED(8), (False, 8.0, None)),
    ("our_fixed", lambda: _ours("FixedLossScale")(8), lambda: TF_FIXED(8), (False, 8.0, None)),
    (
        "tf_dynamic",
        lambda: TF_DYNAMIC(2048, 500),
        lambda: TF_DYNAMIC(2048, 500),
        (True, 2048.0, 500),
    ),
    (
        "our_dynamic",
        lambda: _ours("DynamicLossScale")(2048, 500),
        lambda: TF_DYNAMIC(2048, 500),
        (True, 2048.0, 500),
    ),
    ("tf_dynamic_defaults", lambda: TF_DYNAMIC(), lambda: TF_DYNAMIC(), (True, 32768.0, 2000)),
    (
        "our_dynamic_defaults",
        lambda: _ours("DynamicLossScale")(),
        lambda: TF_DYNAMIC(),
        (True, 32768.0, 2000),
    ),
    (
        "tf_dynamic_keywords",
        lambda: TF_DYNAMIC(initial_loss_scale=4, increment_period=3, multiplier=2.0),
        lambda: TF_DYNAMIC(initial_loss_scale=4, increment_period=3, multiplier=2.0),
        (True, 4.0, 3),
    ),
    (
        "our_dynamic_keywords",
        lambda: _ours("DynamicLossScale")(initial_loss_scale=4, increment_period=3, multiplier=2.0),
        lambda: TF_DYNAMIC(initial_loss_scale=4, increment_period=3, multiplier=2.0),
        (True, 4.0, 3),
    ),
    # A serialized LossScale (as TF 2.1-2.3 configs held it) is read like the object.
    (
        "serialized_fixed",
        lambda: {"class_name": "FixedLossScale", "config": {"loss_scale_value": 8.0}},
        lambda: {"class_name": "FixedLossScale", "config": {"loss_scale_value": 8.0}},
        (False, 8.0, None),
    ),
    (
        "serialized_dynamic",
        lambda: {
            "class_name": "DynamicLossScale",
            "config": {"initial_loss_scale": 2048.0, "increment_period": 500, "multiplier": 2.0},
        },
        lambda: {
            "class_name": "DynamicLossScale",
            "config": {"initial_loss_scale": 2048.0, "increment_period": 500, "multiplier": 2.0},
        },
        (True, 2048.0, 500),
    ),
]


def _translation_params():
    return [pytest.param(make, ref, expected, id=i) for i, make, ref, expected in TRANSLATIONS]


def _experimental(*args, **kwargs):
    """Construct the experimental class, asserting the deprecation warning separately."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return compat_lso.experimental.LossScaleOptimizer(*args, **kwargs)


def _reference_triple(loss_scale):
    if _tf_legacy_lso is None:
        pytest.skip("TensorFlow's internal legacy LossScaleOptimizerV1 is not available")
    opt = _tf_legacy_lso.LossScaleOptimizerV1(_tf_legacy_sgd.SGD(), loss_scale)
    config = opt.get_config()
    return (config["dynamic"], config["initial_scale"], config["dynamic_growth_steps"])


@pytest.mark.parametrize("make_loss_scale, make_reference, expected", _translation_params())
def test_loss_scale_translation(make_sgd, make_loss_scale, make_reference, expected):
    assert _reference_triple(make_reference()) == expected
    opt = _experimental(make_sgd(), make_loss_scale())
    config = opt.get_config()
    assert (config["dynamic"], config["initial_scale"], config["dynamic_growth_steps"]) == expected
    assert (opt.dynamic, opt.initial_scale, opt.dynamic_growth_steps) == expected
    assert float(opt.loss_scale) == expected[1]
    assert isinstance(opt, compat_lso.LossScaleOptimizer)
    assert isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)


@pytest.mark.parametrize("make_loss_scale, make_reference, expected", _translation_params())
def test_config_equals_the_new_construction(make_sgd, make_loss_scale, make_reference, expected):
    dynamic, initial, growth = expected
    kwargs = (
        {"initial_scale": initial, "dynamic_growth_steps": growth}
        if dynamic
        else {
            "dynamic": False,
            "initial_scale": initial,
        }
    )
    old = _experimental(make_sgd(), make_loss_scale())
    new = compat_lso.LossScaleOptimizer(make_sgd(), **kwargs)
    assert old.get_config() == new.get_config()
    if KERAS2:
        assert old.get_config() == NATIVE_LSO(make_sgd(), **kwargs).get_config()


def test_keyword_arguments_optimizer_and_loss_scale(make_sgd):
    inner = make_sgd()
    opt = _experimental(optimizer=inner, loss_scale=8)
    assert opt.inner_optimizer is inner
    assert (opt.dynamic, opt.initial_scale) == (False, 8.0)


def test_multiplier_other_than_two_is_refused(make_sgd):
    message = "DynamicLossScale.multiplier must be 2"
    if _tf_legacy_lso is not None:
        with pytest.raises(ValueError, match=message):
            _tf_legacy_lso.LossScaleOptimizerV1(
                _tf_legacy_sgd.SGD(), TF_DYNAMIC(2, 3, multiplier=4)
            )
    for loss_scale in (
        TF_DYNAMIC(2, 3, multiplier=4),
        compat_lso.experimental.DynamicLossScale(2, 3, multiplier=4),
    ):
        with pytest.raises(ValueError, match=message):
            _experimental(make_sgd(), loss_scale)


class _OtherLossScale(tf.compat.v1.mixed_precision.LossScale):
    def __call__(self):
        return tf.constant(1.0)

    def update(self, grads):
        return tf.no_op(), True

    def get_config(self):
        return {}


def test_other_loss_scale_subclass_is_a_type_error(make_sgd):
    if _tf_legacy_lso is not None:
        with pytest.raises(TypeError):
            _tf_legacy_lso.LossScaleOptimizerV1(_tf_legacy_sgd.SGD(), _OtherLossScale())
    # Keras 2.8's message, word for word: no other kind of LossScale since TF 2.4.
    with pytest.raises(
        TypeError,
        match=r"^Passing a LossScale that is not a FixedLossScale or a DynamicLossScale is no "
        r"longer supported\. Got: ",
    ):
        _experimental(make_sgd(), _OtherLossScale())


@pytest.mark.parametrize(
    "bad", ["foo", "Dynamic", None, [2.0]], ids=["foo", "Dynamic", "None", "list"]
)
def test_invalid_loss_scale_value_is_a_value_error(make_sgd, bad):
    if _tf_legacy_lso is not None:
        with pytest.raises(ValueError, match="Invalid value passed to loss_scale"):
            _tf_legacy_lso.LossScaleOptimizerV1(_tf_legacy_sgd.SGD(), bad)
    with pytest.raises(ValueError, match="Invalid value passed to loss_scale") as excinfo:
        _experimental(make_sgd(), bad)
    if bad == "foo":
        assert str(excinfo.value) == (
            'Invalid value passed to loss_scale. loss_scale must be the string "dynamic" '
            "(recommended), an int, a float, a FixedLossScale, or a DynamicLossScale. "
            "Got value: foo"
        )


# --- the deprecation warning ------------------------------------------------------------------

# The suggested call; its first argument is the user's optimizer, whatever the message names it
# (TF's own message said ``opt``, the experimental signature says ``optimizer``).
_CALL = re.compile(r"compat_lso\.LossScaleOptimizer\((?P<inner>[A-Za-z_]\w*)(?P<rest>[^()]*)\)")


def _construct_recording(inner, loss_scale):
    """Returns (optimizer, DeprecationWarnings, line number of the construction)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = inspect.currentframe()
        assert frame is not None
        line = frame.f_lineno + 1
        opt = compat_lso.experimental.LossScaleOptimizer(inner, loss_scale)
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    return opt, deprecations, line


@pytest.mark.parametrize("make_loss_scale, make_reference, expected", _translation_params())
def test_construction_emits_one_deprecation_warning_at_the_callers_line(
    make_sgd, make_loss_scale, make_reference, expected
):
    inner, loss_scale = make_sgd(), make_loss_scale()
    opt, deprecations, line = _construct_recording(inner, loss_scale)
    assert len(deprecations) == 1, [str(w.message) for w in deprecations]
    (w,) = deprecations
    assert w.filename == __file__
    assert w.lineno == line
    # The message names the replacement, and that call builds an equivalent optimizer.
    calls = list(_CALL.finditer(str(w.message)))
    assert len(calls) == 1, str(w.message)
    call, args = calls[0].group(0), calls[0].group("rest")
    replacement = eval(call, {"compat_lso": compat_lso, calls[0].group("inner"): make_sgd()})
    assert replacement.get_config() == opt.get_config()
    # Defaults are omitted from the suggested call.
    if expected[0]:
        assert "dynamic=" not in args
        assert ("initial_scale" in args) == (expected[1] != 32768.0)
        assert ("dynamic_growth_steps" in args) == (expected[2] != 2000)
    else:
        assert "dynamic=False" in args
        assert "dynamic_growth_steps" not in args


@pytest.mark.parametrize(
    "loss_scale, args",
    [("dynamic", ""), (123, ", dynamic=False, initial_scale=123")],
    ids=["dynamic", "fixed_123"],
)
def test_deprecation_message_has_the_exact_replacement_call(make_sgd, loss_scale, args):
    _, deprecations, _ = _construct_recording(make_sgd(), loss_scale)
    assert len(deprecations) == 1
    calls = list(_CALL.finditer(str(deprecations[0].message)))
    assert len(calls) == 1, str(deprecations[0].message)
    assert calls[0].group("rest") == args


def test_non_experimental_class_does_not_warn(make_sgd):
    inner = make_sgd()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compat_lso.LossScaleOptimizer(inner, initial_scale=8, dynamic_growth_steps=3)
    assert [w for w in caught if "compat_lso" in str(w.message) or "compat_lso" in w.filename] == []


def test_failed_construction_does_not_leave_the_inner_optimizer_wrapped(make_sgd):
    inner = make_sgd()
    with pytest.raises(ValueError):
        _experimental(inner, "foo")
    # The refused call must not have marked the inner optimizer as wrapped.
    assert compat_lso.LossScaleOptimizer(inner).inner_optimizer is inner


# --- behaviour of the translated optimizer ----------------------------------------------------


@pytest.mark.parametrize(
    "loss_scale_cls", [TF_DYNAMIC, _ours("DynamicLossScale")], ids=["tf", "ours"]
)
def test_translated_dynamic_loss_scale_follows_the_trajectory(
    make_sgd, maybe_tf_function, loss_scale_cls
):
    var = tf.Variable(0.0)
    opt = _experimental(make_sgd(1.0), loss_scale_cls(initial_loss_scale=4, increment_period=3))

    @maybe_tf_function
    def step(g):
        opt.apply_gradients([(g, var)])

    scales, counters = [], []
    for g in [1.0, 1.0, 1.0, 1.0, math.inf, math.nan, 1.0]:
        step(tf.constant(g))
        scales.append(float(opt.loss_scale))
        counters.append(int(opt.dynamic_counter.numpy()))
    assert scales == [4.0, 4.0, 8.0, 8.0, 4.0, 2.0, 2.0]
    assert counters == [1, 2, 0, 1, 0, 0, 1]
    assert int(opt.iterations.numpy()) == 7
    assert var.numpy() == -5.0


def test_translated_fixed_loss_scale_scales_minimize(make_sgd, maybe_tf_function):
    var = tf.Variable([5.0])
    opt = _experimental(make_sgd(2.0), 10)

    @maybe_tf_function
    def step():
        opt.minimize(lambda: var * 3.0, var_list=[var])

    step()
    assert var.numpy().tolist() == [-1.0]  # 5 - 3 * 2
    assert float(opt.loss_scale) == 10.0
    with tf.GradientTape() as tape:
        scaled = opt.get_scaled_loss(var * 1.0)
    assert scaled.numpy().tolist() == [-10.0]
    (grad,) = opt.get_unscaled_gradients(tape.gradient(scaled, [var]))
    assert grad.numpy().tolist() == [1.0]


def test_a_dynamic_loss_scale_gives_its_initial_scale_not_its_current_one(make_sgd):
    # TF 2.4-2.8 built the optimizer from the LossScale's settings: TensorFlow's DynamicLossScale
    # that already halved (4 -> 2 on a non-finite gradient) still starts the optimizer at 4.
    # (compat_lso's own DynamicLossScale holds settings only: it has no current scale.)
    loss_scale = TF_DYNAMIC(initial_loss_scale=4, increment_period=1)
    loss_scale.update([tf.constant(math.inf)])
    assert float(loss_scale()) == 2.0
    var = tf.Variable([5.0])
    opt = _experimental(make_sgd(2.0), loss_scale)
    assert (opt.initial_scale, opt.dynamic_growth_steps) == (4.0, 1)
    assert float(opt.loss_scale) == 4.0
    assert int(opt.dynamic_counter.numpy()) == 0
    with tf.GradientTape() as tape:
        scaled = opt.get_scaled_loss(var * 1.0)
    assert scaled.numpy().tolist() == [20.0]  # scaled by 4
    (grad,) = opt.get_unscaled_gradients(tape.gradient(scaled, [var]))
    opt.apply_gradients([(grad, var)])
    assert var.numpy().tolist() == [3.0]  # 5 - 1 * 2
    assert float(opt.loss_scale) == 8.0  # one good step, growth every step


# --- wrapping errors go through the experimental constructor too ------------------------------


def test_experimental_refuses_to_wrap_a_loss_scale_optimizer(make_sgd):
    with pytest.raises(TypeError, match="LossScaleOptimizer"):
        _experimental(compat_lso.LossScaleOptimizer(make_sgd()), "dynamic")
    with pytest.raises(TypeError, match="LossScaleOptimizer"):
        _experimental(_experimental(make_sgd(), 8), 8)


def test_experimental_refuses_an_optimizer_already_wrapped(make_sgd):
    inner = make_sgd()
    _experimental(inner, "dynamic")
    with pytest.raises(ValueError, match="already wrapped"):
        _experimental(inner, 8)
    with pytest.raises(ValueError, match="already wrapped"):
        compat_lso.LossScaleOptimizer(inner)


@pytest.mark.parametrize("bad_inner", [1, "sgd", None], ids=["int", "str", "none"])
def test_experimental_refuses_a_non_optimizer(bad_inner):
    with pytest.raises(TypeError):
        _experimental(bad_inner, "dynamic")


@pytest.mark.parametrize(
    ("name", "compute_dtype", "variable_dtype"),
    [
        ("mixed_float16", "float16", "float32"),
        ("mixed_bfloat16", "bfloat16", "float32"),
        ("float64", "float64", "float64"),
    ],
)
def test_policy_computes_in_the_dtypes_its_name_says(name, compute_dtype, variable_dtype):
    # Keras 3.3's DTypePolicy parsed no name: a subclass computed in float32, silently.
    with pytest.warns(DeprecationWarning):
        policy = compat_lso.experimental.Policy(name)
    assert (policy.compute_dtype, policy.variable_dtype) == (compute_dtype, variable_dtype)
    layer = tf.keras.layers.Dense(1, dtype=policy)
    outputs = layer(tf.ones((1, 2)))
    assert (outputs.dtype, layer.kernel.dtype) == (compute_dtype, variable_dtype)
