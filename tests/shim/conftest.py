"""Fixtures for the shim's behavioural tests.

Every test that takes ``lso_cls`` runs against ``compat_lso.LossScaleOptimizer`` and, on Keras 2
backends (where the native ``tf.keras.mixed_precision.LossScaleOptimizer`` already has the TF 2.4
API), also against the native class as a reference: a test that is wrong about Keras 2 fails
there, whatever the shim does.

Every test that takes ``make_sgd`` runs with a new-style ``tf.keras.optimizers.SGD`` inner
optimizer and, where the backend still has them, with a legacy ``tf.keras.optimizers.legacy.SGD``.
"""

from __future__ import annotations

from typing import Any

import pytest
import tensorflow as tf

NATIVE_LSO = tf.keras.mixed_precision.LossScaleOptimizer
# Keras 2 (TF 2.15 tf.keras, tf_keras): the native class has the TF 2.4 API and is our reference.
KERAS2 = hasattr(NATIVE_LSO, "get_scaled_loss")


def _legacy_sgd_cls():
    """The legacy (OptimizerV2) SGD class, or None where the backend has none (Keras 3)."""
    legacy = getattr(tf.keras.optimizers, "legacy", None)
    if legacy is None or not KERAS2:
        # Keras 3 keeps `tf.keras.optimizers.legacy` only as placeholders that raise.
        return None
    cls = getattr(legacy, "SGD", None)
    if cls is None or cls is tf.keras.optimizers.SGD:
        return None
    return cls


LEGACY_SGD = _legacy_sgd_cls()
NEW_SGD = tf.keras.optimizers.SGD
INNER_KINDS = ["new", "legacy"] if LEGACY_SGD is not None else ["new"]


def compat_cls():
    """``compat_lso.LossScaleOptimizer``; imported lazily so collection works before it exists."""
    import compat_lso

    return compat_lso.LossScaleOptimizer


def compat_experimental_cls():
    import compat_lso.experimental

    return compat_lso.experimental.LossScaleOptimizer


def _lso_params():
    params = [pytest.param("compat", id="compat")]
    if KERAS2:
        params.append(pytest.param("native", id="native"))
    return params


@pytest.fixture(params=_lso_params())
def lso_cls(request):
    """The loss-scale-optimizer class under test: the shim, and on Keras 2 the native reference."""
    if request.param == "native":
        return NATIVE_LSO
    return compat_cls()


@pytest.fixture
def lso_kind(lso_cls):
    return "native" if lso_cls is NATIVE_LSO else "compat"


@pytest.fixture(params=INNER_KINDS)
def inner_kind(request):
    return request.param


@pytest.fixture
def make_sgd(inner_kind):
    """Factory for the inner SGD optimizer (new or legacy)."""
    return _SGDFactory(NEW_SGD if inner_kind == "new" else LEGACY_SGD, inner_kind)


class _SGDFactory:
    """Builds the inner SGD; `cls` and `kind` say which one, for tests that subclass or skip."""

    def __init__(self, cls: Any, kind: str) -> None:
        self.cls = cls
        self.kind = kind

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.cls(*args, **kwargs)


@pytest.fixture(params=[False, True], ids=["eager", "tf_function"])
def use_tf_function(request):
    return request.param


@pytest.fixture
def maybe_tf_function(use_tf_function):
    """Wraps a step function in ``tf.function`` or leaves it eager (both modes are run)."""

    def wrap(fn):
        return tf.function(fn) if use_tf_function else fn

    return wrap
