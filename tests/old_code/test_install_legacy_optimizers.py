"""install() on Keras 3 gives TF 2.15's `tf.keras.optimizers.legacy` names Keras 3's optimizer of
the same update rule, with a warning at the user's line; an error naming the line, the argument
and tf_keras where none is the same rule. On Keras 2 backends the legacy classes are left alone.
TF 2.15's numbers are checked end to end by the legacy_* pattern scripts (test_patterns.py);
compat_lso/core/legacy_optimizers.py says what was measured.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from compat_lso.core import legacy_optimizers as table
from tests.shim.backend import IS_KERAS_2

keras3_only = pytest.mark.skipif(
    IS_KERAS_2, reason="Keras 2 has TF 2.15's legacy classes themselves: nothing is replaced"
)
THIS_FILE = pathlib.Path(__file__).name


def _owners() -> list:
    owners = [tf.keras.optimizers.legacy]
    for name in ("tensorflow.keras.optimizers.legacy", "keras.optimizers.legacy"):
        # Standalone keras 2 without the module (the tf_keras environment).
        with contextlib.suppress(ModuleNotFoundError):
            owners.append(importlib.import_module(name))
    return list({id(owner): owner for owner in owners}.values())


@pytest.fixture
def installed():
    before = {
        (n, owner.__dict__.get(n, None)) for owner in _owners() for n in table.LEGACY_OPTIMIZERS
    }
    compat_lso.install()
    yield tf.keras.optimizers.legacy
    compat_lso.uninstall()
    after = {
        (n, owner.__dict__.get(n, None)) for owner in _owners() for n in table.LEGACY_OPTIMIZERS
    }
    assert after == before  # uninstall() put back exactly what was there


@pytest.mark.skipif(not IS_KERAS_2, reason="Keras 3's names are replaced; tested below")
def test_keras_2_backends_keep_their_legacy_classes(installed):
    assert installed.Adam.__module__.startswith(("keras.", "tf_keras."))
    assert "compat_lso" not in repr(installed.Nadam)


def _line() -> str:
    caller = inspect.currentframe().f_back  # type: ignore[union-attr]
    return f"{THIS_FILE}:{caller.f_lineno + 1}"  # type: ignore[union-attr]


@keras3_only
def test_every_spelling_builds_keras_3s_class_and_uninstall_restores_keras_3s(installed):
    import keras

    for owner in _owners():
        for name in table.LEGACY_OPTIMIZERS:
            assert getattr(owner, name).keras3 is getattr(keras.optimizers, name), (owner, name)
    from tensorflow.keras.optimizers.legacy import SGD

    with pytest.warns(UserWarning, match="bit for bit") as caught:
        line = _line()
        optimizer = SGD(0.5, 0.9, True)
    assert type(optimizer) is keras.optimizers.SGD
    assert (optimizer.momentum, optimizer.nesterov) == (0.9, True)
    assert isinstance(optimizer, tf.keras.optimizers.legacy.SGD)
    assert not isinstance(optimizer, tf.keras.optimizers.legacy.Adam)
    # The user's line, in the text and as the warning's location.
    assert line in str(caught[0].message)
    assert pathlib.Path(caught[0].filename).name == THIS_FILE


@keras3_only
@pytest.mark.parametrize(
    "name, args, kwargs, expected",
    [
        # TF 2.15's positional order: Ftrl's `name` comes before l2_shrinkage and beta.
        (
            "Ftrl",
            (0.1, -0.5, 0.2, 0.01, 0.02, "ftrl", 0.03, 0.5),
            {},
            {
                "initial_accumulator_value": 0.2,
                "l2_shrinkage_regularization_strength": 0.03,
                "beta": 0.5,
                "name": "ftrl",
            },
        ),
        (
            "Adam",
            (),
            {"lr": 0.25, "epsilon": None, "amsgrad": True},
            {"learning_rate": 0.25, "epsilon": 1e-7, "amsgrad": True},
        ),
        ("Adamax", (0.1, 0.8, 0.99, 0), {}, {"beta_1": 0.8, "epsilon": 1e-7}),
        ("Adadelta", (), {"rho": 0.5, "clipnorm": 1.0}, {"rho": 0.5, "clipnorm": 1.0}),
        ("RMSprop", (0.1, 0.8, 0.5), {"centered": True}, {"momentum": 0.5, "centered": True}),
        ("Adagrad", (0.1,), {}, {"initial_accumulator_value": 0.1, "epsilon": 1e-7}),
    ],
)
def test_tf_2_15_arguments_mean_the_same_on_keras_3s_class(installed, name, args, kwargs, expected):
    import keras

    with pytest.warns(UserWarning, match=f"legacy.{name} is built as Keras 3's") as caught:
        optimizer = getattr(installed, name)(*args, **kwargs)
    assert type(optimizer) is getattr(keras.optimizers, name)
    config = optimizer.get_config()
    for key, value in expected.items():
        assert config[key] == (pytest.approx(value) if isinstance(value, float) else value), key
    closeness = table.LEGACY_OPTIMIZERS[name][1]
    assert ("last bits" in str(caught[0].message)) == (closeness == table.LAST_BITS)


@keras3_only
def test_decay_keeps_tf_2_15s_learning_rate_over_iterations(installed):
    # TF 2.15: each step uses learning_rate / (1 + decay * iterations). Gradient 1 on w = 0, lr
    # 0.5, decay 0.25: w = -(0.5/1 + 0.5/1.25 + 0.5/1.5) = -1.2333..., by hand.
    with pytest.warns(UserWarning):
        optimizer = installed.SGD(learning_rate=0.5, decay=0.25)
    w = tf.Variable([0.0])
    for _ in range(3):
        optimizer.apply_gradients([(tf.constant([1.0]), w)])
    np.testing.assert_allclose(w.numpy(), [-(0.5 + 0.4 + 0.5 / 1.5)], rtol=1e-6)


@keras3_only
@pytest.mark.parametrize(
    "build, error, words",
    [
        (lambda legacy: legacy.Nadam(), ImportError, ["0.96**(0.004 * step)"]),
        (lambda legacy: legacy.RMSprop(0.1), ImportError, ["momentum=0.0", "outside the square"]),
        (lambda legacy: legacy.RMSprop(momentum=tf.Variable(0.5)), ImportError, ["momentum="]),
        (
            lambda legacy: legacy.Adagrad(initial_accumulator_value=0.0),
            ImportError,
            ["initial_accumulator_value=0.0", "2**-20"],
        ),
        (lambda legacy: legacy.Adam(weight_decay=0.1), TypeError, ["'weight_decay'"]),
        (
            lambda legacy: legacy.SGD(
                tf.keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5), decay=0.1
            ),
            TypeError,
            ["decay=0.1", "InverseTimeDecay"],
        ),
    ],
)
def test_no_keras_3_equivalent_is_an_error_at_the_line_naming_tf_keras(
    installed, build, error, words
):
    with pytest.raises(error) as raised:
        build(installed)
    message = str(raised.value)
    for word in [*words, THIS_FILE, "tf_keras", "TF_USE_LEGACY_KERAS=1"]:
        assert word in message, word


@keras3_only
def test_a_call_tf_2_15_refused_is_refused(installed):
    with pytest.raises(
        TypeError, match=r"SGD takes at most 4 positional arguments \(learning_rate"
    ):
        installed.SGD(0.1, 0.0, False, "sgd", 5)


@keras3_only
def test_a_subclass_of_a_legacy_class_is_refused_when_built(installed):
    class WarmAdam(installed.Adam):  # type: ignore[name-defined]
        def _resource_apply_dense(self, grad, var, apply_state=None):
            raise AssertionError("never reached")

    with pytest.raises(
        ImportError, match=r"WarmAdam subclasses tf\.keras\.optimizers\.legacy\.Adam\b"
    ):
        WarmAdam(0.1)
