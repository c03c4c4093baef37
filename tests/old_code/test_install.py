"""`install()` restores the removed names, never replaces real ones, and `uninstall()` undoes it."""

from __future__ import annotations

import importlib
import os
import sys
import warnings

import pytest
import tensorflow as tf

import compat_lso
from compat_lso import experimental


@pytest.fixture
def installed():
    compat_lso.install()
    yield
    compat_lso.uninstall()
    tf.keras.mixed_precision.set_global_policy("float32")


@pytest.mark.usefixtures("installed")
def test_every_old_spelling_reaches_the_shim():
    from tensorflow.keras.mixed_precision import experimental as mixed_precision
    from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
    from tensorflow.mixed_precision.experimental import DynamicLossScale

    module = importlib.import_module("tensorflow.keras.mixed_precision.experimental")
    assert LossScaleOptimizer is mixed_precision.LossScaleOptimizer is module.LossScaleOptimizer
    assert (
        tf.keras.mixed_precision.experimental.LossScaleOptimizer is experimental.LossScaleOptimizer
    )
    assert tf.keras.mixed_precision.experimental.Policy is experimental.Policy
    assert tf.keras.mixed_precision.experimental.set_policy is experimental.set_policy
    assert tf.keras.mixed_precision.experimental.global_policy is experimental.global_policy
    assert (
        DynamicLossScale
        is tf.mixed_precision.experimental.DynamicLossScale
        is experimental.DynamicLossScale
    )
    assert tf.train.experimental.FixedLossScale is experimental.FixedLossScale
    assert (
        tf.train.experimental.enable_mixed_precision_graph_rewrite
        is experimental.enable_mixed_precision_graph_rewrite
    )


@pytest.mark.usefixtures("installed")
@pytest.mark.skipif(
    os.environ.get("TF_USE_LEGACY_KERAS") == "1",
    reason="with TF_USE_LEGACY_KERAS=1 standalone keras is Keras 3, not the tf.keras the shim "
    "serves (tf_keras): its namespace is not restored",
)
def test_standalone_keras_gets_the_namespace_when_it_backs_tf_keras():
    import keras

    assert keras.mixed_precision.experimental.LossScaleOptimizer is experimental.LossScaleOptimizer
    # Importable too (issue 12: on Keras 3 the attribute was set but the import failed).
    from keras.mixed_precision.experimental import LossScaleOptimizer, Policy

    assert LossScaleOptimizer is experimental.LossScaleOptimizer
    assert Policy is experimental.Policy


@pytest.mark.usefixtures("installed")
def test_the_compat_v1_alias_is_importable():
    # Issue 12: on Keras 3 `tf.compat.v1.keras.mixed_precision` is `keras.mixed_precision`, one
    # module object under several names; each name must import.
    module = importlib.import_module("tensorflow.compat.v1.keras.mixed_precision.experimental")
    assert module.LossScaleOptimizer is experimental.LossScaleOptimizer
    from tensorflow.compat.v1.keras.mixed_precision.experimental import LossScaleOptimizer

    assert LossScaleOptimizer is experimental.LossScaleOptimizer


def test_install_is_idempotent_and_uninstall_undoes_it():
    before = set(sys.modules)
    compat_lso.install()
    compat_lso.install()
    assert hasattr(tf.keras.mixed_precision, "experimental")
    compat_lso.uninstall()
    assert not hasattr(tf.keras.mixed_precision, "experimental")
    assert not hasattr(tf, "mixed_precision")
    assert not hasattr(tf.train.experimental, "DynamicLossScale")
    for name in (
        "tensorflow.keras.mixed_precision.experimental",
        "tensorflow.compat.v1.keras.mixed_precision.experimental",
        "keras.mixed_precision.experimental",
    ):
        assert name not in sys.modules
        with pytest.raises(ImportError):
            importlib.import_module(name)
    assert not hasattr(tf.keras.Model.compile, "__compat_lso_wrapper__")
    assert not (set(sys.modules) - before) & {
        "tensorflow.mixed_precision",
        "tensorflow.mixed_precision.experimental",
    }


def test_install_never_replaces_a_name_tensorflow_has():
    real = object()
    tf.train.experimental.DynamicLossScale = real
    try:
        compat_lso.install()
        assert tf.train.experimental.DynamicLossScale is real
        compat_lso.uninstall()
        assert tf.train.experimental.DynamicLossScale is real
    finally:
        del tf.train.experimental.DynamicLossScale


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize(
    "loss_scale, expected",
    [
        ("auto", (True, 32768.0)),
        ("dynamic", (True, 32768.0)),
        (128, (False, 128.0)),
        (experimental.DynamicLossScale(256, 3), (True, 256.0)),
        (None, None),
    ],
    ids=["auto", "dynamic", "fixed", "dynamic-custom", "none"],
)
def test_compile_wraps_with_the_policys_loss_scale(loss_scale, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tf.keras.mixed_precision.experimental.set_policy(
            tf.keras.mixed_precision.experimental.Policy("mixed_float16", loss_scale=loss_scale)
        )
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    if expected is None:
        assert not isinstance(model.optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
    else:
        assert isinstance(model.optimizer, experimental.LossScaleOptimizer)
        assert (model.optimizer.dynamic, model.optimizer.initial_scale) == expected


@pytest.mark.usefixtures("installed")
def test_compile_leaves_a_loss_scale_optimizer_alone():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
    optimizer = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.SGD(), dynamic=False, initial_scale=4
    )
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer=optimizer, loss="mse")
    assert model.optimizer is optimizer


@pytest.mark.usefixtures("installed")
def test_load_model_still_compiles_while_installed(tmp_path):
    # Keras 3 skips compiling on load when it thinks Model.compile was overridden.
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    model.compile(
        optimizer=compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(), initial_scale=8),
        loss="mse",
    )
    model.save(tmp_path / "model.keras")
    loaded = tf.keras.models.load_model(tmp_path / "model.keras")
    assert isinstance(loaded.optimizer, compat_lso.LossScaleOptimizer)
    assert loaded.optimizer.initial_scale == 8.0


def test_cli_errors_leave_nothing_installed():
    from compat_lso import __main__ as cli
    from compat_lso.installer import names as _install

    with pytest.raises(SystemExit):
        cli.main(["run", "no_such_script.py"])
    assert not _install.is_installed()


def test_policy_auto_means_dynamic_only_for_mixed_float16():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert isinstance(
            experimental.Policy("mixed_float16").loss_scale, experimental.DynamicLossScale
        )
        assert experimental.Policy("float32").loss_scale is None
        assert experimental.Policy("mixed_bfloat16").loss_scale is None


def test_policy_rejects_a_bad_loss_scale_naming_it():
    with pytest.raises(ValueError, match="Invalid value passed to loss_scale"):
        experimental.Policy("mixed_float16", loss_scale="automatic")


def test_experimental_loss_scale_is_callable_and_a_tensor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        optimizer = experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 8)
    assert float(optimizer.loss_scale()) == 8.0  # TF 2.2/2.3: a LossScale, called
    assert float(tf.convert_to_tensor(optimizer.loss_scale)) == 8.0  # TF 2.4: a tensor
    assert float(optimizer.loss_scale * 2) == 16.0
    assert float(tf.constant(3.0) / optimizer.loss_scale) == 0.375


def test_graph_rewrite_returns_a_wrapped_optimizer_and_refuses_a_mixed_policy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        wrapped = experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(), 64)
        experimental.disable_mixed_precision_graph_rewrite()
        assert isinstance(wrapped, compat_lso.LossScaleOptimizer)
        assert (wrapped.dynamic, wrapped.initial_scale) == (False, 64.0)
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        try:
            with pytest.raises(ValueError, match="has been set to a mixed precision policy"):
                experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD())
        finally:
            tf.keras.mixed_precision.set_global_policy("float32")


def test_importing_compat_lso_does_not_import_tensorflow_or_libcst():
    import subprocess

    code = (
        "import sys, compat_lso; "
        "print(sorted(m for m in ('tensorflow', 'keras', 'libcst') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
