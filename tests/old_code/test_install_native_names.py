"""install() on Keras 3 puts TF 2.15's meaning behind `tf.keras.mixed_precision.LossScaleOptimizer`.

The name then takes both generations' calls, isinstance sees every Keras 3 loss scale
optimizer, `compile()` wraps as TF 2.15 did, `keep_native` opts out, and `uninstall()` puts
Keras 3's own class back. On Keras 2 backends nothing is replaced (the native class already has
that meaning). The numbers TF 2.15 gives are checked end to end in test_tf24_scripts.py.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from compat_lso import experimental
from compat_lso.installer import names as _install
from tests.shim.backend import IS_KERAS_2, IS_KERAS_3, NATIVE_LSO

keras3_only = pytest.mark.skipif(
    IS_KERAS_2, reason="Keras 2's native class already has TF 2.4's meaning: nothing is replaced"
)


def _native_name_owners() -> list:
    owners = [tf.keras.mixed_precision, importlib.import_module("tensorflow.keras.mixed_precision")]
    if IS_KERAS_3:
        import keras

        owners.append(keras.mixed_precision)
    return owners


@pytest.fixture
def installed(monkeypatch):
    monkeypatch.delenv("COMPAT_LSO_KEEP_NATIVE", raising=False)
    compat_lso.install()
    yield tf.keras.mixed_precision.LossScaleOptimizer
    compat_lso.uninstall()
    tf.keras.mixed_precision.set_global_policy("float32")


def _sgd():
    return tf.keras.optimizers.SGD(learning_rate=0.5)


@pytest.mark.skipif(IS_KERAS_3, reason="Keras 3's names are replaced; tested below")
def test_keras_2_backends_keep_their_native_class(installed):
    assert installed is NATIVE_LSO
    assert not _install.native_names_replaced()


@keras3_only
def test_every_spelling_of_the_name_is_replaced_and_keras_optimizers_is_not(installed):
    import keras

    from compat_lso.keras3 import installed as _keras3_install

    assert installed is _keras3_install.LossScaleOptimizer
    for owner in _native_name_owners():
        assert owner.LossScaleOptimizer is installed, owner
    from tensorflow.keras.mixed_precision import LossScaleOptimizer

    assert LossScaleOptimizer is installed
    # Keras 2 had no `keras.optimizers.LossScaleOptimizer`: only Keras 3 code spells it.
    assert keras.optimizers.LossScaleOptimizer is NATIVE_LSO


@keras3_only
@pytest.mark.parametrize(
    "args, kwargs, expected",
    [
        ((False, 128), {}, (False, 128.0, None)),
        ((True, 1024, 500), {}, (True, 1024.0, 500)),
        ((True,), {"initial_scale": 8}, (True, 8.0, 2000)),
        ((), {"dynamic": False, "initial_scale": 4}, (False, 4.0, None)),
        ((), {}, (True, 32768.0, 2000)),
        # Keras 3's own keywords
        ((), {"initial_scale": 64, "dynamic_growth_steps": 3}, (True, 64.0, 3)),
        # What Keras 3's from_config passes from files older Keras 3 wrote: defaults only.
        ((), {"initial_scale": 2, "clipnorm": None, "use_ema": False}, (True, 2.0, 2000)),
    ],
    ids=[
        "tf24-positional-fixed",
        "tf24-positional-dynamic",
        "tf24-positional-and-keyword",
        "tf24-keyword-fixed",
        "defaults",
        "keras3-keywords",
        "keras3-default-base-arguments",
    ],
)
def test_both_generations_calls_are_read_by_name(installed, args, kwargs, expected):
    optimizer = installed(_sgd(), *args, **kwargs)
    assert type(optimizer) is compat_lso.LossScaleOptimizer
    assert (optimizer.dynamic, optimizer.initial_scale, optimizer.dynamic_growth_steps) == expected
    assert float(optimizer.loss_scale) == expected[1]


@keras3_only
def test_name_keyword_and_inner_optimizer_keyword(installed):
    optimizer = installed(inner_optimizer=_sgd(), initial_scale=4, name="scaled")
    assert optimizer.name == "scaled"
    assert optimizer.get_config()["name"] == "scaled"


@keras3_only
@pytest.mark.parametrize("value", [1024, 1024.0, np.float32(8), "dynamic"])
def test_a_positional_second_argument_that_is_not_a_bool_is_refused(installed, value):
    with pytest.raises(TypeError) as error:
        installed(_sgd(), value)
    message = str(error.value)
    # Names both signatures and the keyword fix.
    assert "dynamic=True, initial_scale=None, dynamic_growth_steps=None" in message
    assert "initial_scale=2.0**15, dynamic_growth_steps=2000, name=None" in message
    assert f"LossScaleOptimizer(inner_optimizer, initial_scale={value!r})" in message


@keras3_only
def test_keras_3_only_non_default_arguments_are_refused_as_keras_3_does(installed):
    with pytest.raises(ValueError, match=r"does not support `clipnorm`\. Instead, set `clipnorm`"):
        installed(_sgd(), clipnorm=1.0)
    with pytest.raises(TypeError, match="unexpected keyword arguments: \\['loss_scale'\\]"):
        installed(_sgd(), loss_scale=128)
    with pytest.raises(TypeError, match="at most 4 positional arguments"):
        installed(_sgd(), True, 8, 2, "name")
    with pytest.raises(TypeError, match="multiple values for argument 'dynamic'"):
        installed(_sgd(), True, dynamic=False)


@keras3_only
def test_isinstance_both_ways(installed):
    import keras

    built_by_keras = keras.optimizers.LossScaleOptimizer(_sgd())
    replaced = installed(_sgd())
    shim = compat_lso.LossScaleOptimizer(_sgd())
    old = experimental.LossScaleOptimizer._without_warning(_sgd(), 8)
    for optimizer in (built_by_keras, replaced, shim, old):
        assert isinstance(optimizer, installed)
        assert isinstance(optimizer, NATIVE_LSO)
    assert not isinstance(_sgd(), installed)
    assert issubclass(NATIVE_LSO, installed)
    assert issubclass(compat_lso.LossScaleOptimizer, installed)
    assert not issubclass(type(_sgd()), installed)


@keras3_only
def test_old_code_can_subclass_the_name(installed):
    class FixedAt4(installed):  # type: ignore[valid-type,misc]
        def __init__(self, optimizer):
            super().__init__(optimizer, False, 4)

    optimizer = FixedAt4(_sgd())
    assert type(optimizer) is FixedAt4
    assert isinstance(optimizer, installed)
    assert isinstance(optimizer, FixedAt4)
    assert (optimizer.dynamic, float(optimizer.loss_scale)) == (False, 4.0)
    assert not isinstance(installed(_sgd()), FixedAt4)


def _model():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.set_weights([np.ones((2, 1), "float32"), np.zeros((1,), "float32")])
    return model


@keras3_only
def test_compile_under_mixed_float16_wraps_with_keras_2s_rule(installed):
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    model = _model()
    model.compile(optimizer=_sgd(), loss="mse")
    assert type(model.optimizer) is compat_lso.LossScaleOptimizer
    assert (model.optimizer.dynamic, model.optimizer.initial_scale) == (True, 32768.0)
    assert model.optimizer.dynamic_growth_steps == 2000
    model.compile(optimizer="sgd", loss="mse", auto_scale_loss=False)
    assert not isinstance(model.optimizer, installed)
    explicit = compat_lso.LossScaleOptimizer(_sgd(), dynamic=False, initial_scale=4)
    model.compile(optimizer=explicit, loss="mse")
    assert model.optimizer is explicit


@keras3_only
def test_compile_leaves_an_optimizer_keras_built_alone(installed):
    import keras

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    native = keras.optimizers.LossScaleOptimizer(_sgd())
    model = _model()
    model.compile(optimizer=native, loss="mse")
    assert model.optimizer is native


@keras3_only
def test_compile_without_mixed_float16_does_not_wrap(installed):
    model = _model()
    model.compile(optimizer=_sgd(), loss="mse")
    assert not isinstance(model.optimizer, installed)


@keras3_only
def test_a_keras_3_model_file_loads_with_keras_3s_own_class(installed, tmp_path):
    import keras

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    model = _model()
    model.compile(optimizer=keras.optimizers.LossScaleOptimizer(_sgd(), 64), loss="mse")
    model.save(tmp_path / "native.keras")
    loaded = tf.keras.models.load_model(tmp_path / "native.keras")
    assert type(loaded.optimizer) is NATIVE_LSO
    assert loaded.optimizer.initial_scale == 64


@keras3_only
def test_a_model_saved_while_installed_loads_as_the_shim_after_uninstall(installed, tmp_path):
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    model = _model()
    model.compile(optimizer=installed(_sgd(), False, 16), loss="mse")
    model.save(tmp_path / "old.keras")
    compat_lso.uninstall()
    loaded = tf.keras.models.load_model(tmp_path / "old.keras")
    assert type(loaded.optimizer) is compat_lso.LossScaleOptimizer
    assert (loaded.optimizer.dynamic, loaded.optimizer.initial_scale) == (False, 16.0)


@keras3_only
def test_from_config_reads_keras_3_and_tf24_configs(installed):
    import keras

    keras_3_config = keras.optimizers.LossScaleOptimizer(_sgd(), 256, 7).get_config()
    restored = installed.from_config(keras_3_config)
    assert type(restored) is compat_lso.LossScaleOptimizer
    assert (restored.dynamic, restored.initial_scale, restored.dynamic_growth_steps) == (
        True,
        256.0,
        7,
    )
    tf24_config = installed(_sgd(), False, 32).get_config()
    assert installed.from_config(tf24_config).get_config() == tf24_config


@keras3_only
def test_keras_3_code_in_the_same_process_gets_keras_2s_rule(installed):
    """The documented change: Keras 3 code's own loop, run while installed, follows Keras 2's rule.

    Keras 3's class would halve the scale below 1 (1 -> 0.5) and not count the skipped step.
    """
    variable = tf.Variable([1.0])
    optimizer = installed(_sgd(), initial_scale=1)
    for gradient in (np.inf, np.nan, 1.0):
        with tf.GradientTape() as tape:
            loss = optimizer.scale_loss(variable * gradient)
        optimizer.apply_gradients(zip(tape.gradient(loss, [variable]), [variable], strict=True))
    assert float(optimizer.dynamic_scale.numpy()) == 1.0
    assert int(optimizer.iterations.numpy()) == 3
    assert variable.numpy().tolist() == [0.5]


@keras3_only
def test_keep_native_leaves_keras_3s_names_and_switches_both_ways(monkeypatch):
    monkeypatch.delenv("COMPAT_LSO_KEEP_NATIVE", raising=False)
    try:
        compat_lso.install(keep_native=True)
        assert tf.keras.mixed_precision.LossScaleOptimizer is NATIVE_LSO
        assert tf.keras.mixed_precision.experimental.LossScaleOptimizer is (
            experimental.LossScaleOptimizer
        )
        compat_lso.install(keep_native=False)
        assert tf.keras.mixed_precision.LossScaleOptimizer is not NATIVE_LSO
        compat_lso.install(keep_native=True)
        assert all(owner.LossScaleOptimizer is NATIVE_LSO for owner in _native_name_owners())
        monkeypatch.setenv("COMPAT_LSO_KEEP_NATIVE", "1")
        compat_lso.install()
        assert tf.keras.mixed_precision.LossScaleOptimizer is NATIVE_LSO
        monkeypatch.setenv("COMPAT_LSO_KEEP_NATIVE", "0")
        compat_lso.install()
        assert tf.keras.mixed_precision.LossScaleOptimizer is not NATIVE_LSO
    finally:
        compat_lso.uninstall()


@keras3_only
def test_keep_native_compile_wraps_with_keras_3s_class(monkeypatch):
    monkeypatch.setenv("COMPAT_LSO_KEEP_NATIVE", "1")
    compat_lso.install()
    try:
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        model = _model()
        model.compile(optimizer=_sgd(), loss="mse")
        assert type(model.optimizer) is NATIVE_LSO
    finally:
        compat_lso.uninstall()
        tf.keras.mixed_precision.set_global_policy("float32")


def test_uninstall_restores_the_native_names_exactly(monkeypatch):
    monkeypatch.delenv("COMPAT_LSO_KEEP_NATIVE", raising=False)
    owners = _native_name_owners()
    before = [owner.__dict__.get("LossScaleOptimizer") for owner in owners]
    compat_lso.install()
    assert _install.native_names_replaced() == IS_KERAS_3
    compat_lso.uninstall()
    assert [owner.__dict__.get("LossScaleOptimizer") for owner in owners] == before
    assert all(value is NATIVE_LSO for value in before if value is not None)
    assert not _install.native_names_replaced()
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = _model()
        model.compile(optimizer=_sgd(), loss="mse")
        assert type(model.optimizer) is NATIVE_LSO or IS_KERAS_2
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


@keras3_only
def test_one_optimizer_wrapped_by_two_compiles_is_refused_at_the_second_with_both_lines(installed):
    # Keras 2 (TF 2.15, legacy and default optimizers alike) raised '"inner_optimizer" is already
    # wrapped' at the second compile() under mixed_float16; here too, naming both lines.
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    optimizer, first, second = _sgd(), _model(), _model()
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    first.compile(optimizer=optimizer, loss="mse")
    with pytest.raises(ValueError, match="already wrapped this one") as refused:
        second.compile(optimizer=optimizer, loss="mse")
    here = f"{pathlib.Path(__file__)}:"
    assert str(refused.value).startswith(f"{here}{line + 2}: compile() under mixed_float16")
    assert f"the compile() at {here}{line} already wrapped" in str(refused.value)
    assert "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)" in str(refused.value)
    # Wrapped once and shared, it trains both (compat_lso/keras3/shared_optimizer.py).
    shared = installed(_sgd())
    first.compile(optimizer=shared, loss="mse")
    second.compile(optimizer=shared, loss="mse")
    x = np.ones((2, 2), "float32")
    first.fit(x, x[:, :1], verbose=0)
    second.fit(x, x[:, :1], verbose=0)
    assert int(shared.iterations.numpy()) == 2
