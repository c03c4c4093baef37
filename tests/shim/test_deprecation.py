"""One DeprecationWarning per construction of the old class, naming the replacement call."""

from __future__ import annotations

import importlib
import warnings

import pytest
import tensorflow as tf

import compat_lso
from compat_lso import experimental

SGD = tf.keras.optimizers.SGD

REPLACEMENTS = [
    ("dynamic-string", lambda: "dynamic", "compat_lso.LossScaleOptimizer(optimizer)"),
    (
        "number",
        lambda: 123,
        "compat_lso.LossScaleOptimizer(optimizer, dynamic=False, initial_scale=123)",
    ),
    (
        "fixed",
        lambda: experimental.FixedLossScale(8),
        "compat_lso.LossScaleOptimizer(optimizer, dynamic=False, initial_scale=8)",
    ),
    (
        "dynamic-custom",
        lambda: experimental.DynamicLossScale(initial_loss_scale=2048, increment_period=500),
        "compat_lso.LossScaleOptimizer(optimizer, initial_scale=2048, dynamic_growth_steps=500)",
    ),
    (
        "dynamic-defaults-omitted",
        lambda: experimental.DynamicLossScale(),
        "compat_lso.LossScaleOptimizer(optimizer)",
    ),
    (
        "tensorflow-dynamic",
        lambda: tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale=2048),
        "compat_lso.LossScaleOptimizer(optimizer, initial_scale=2048)",
    ),
    (
        "tensorflow-fixed",
        lambda: tf.compat.v1.mixed_precision.FixedLossScale(64),
        "dynamic=False, initial_scale=64)",
    ),
    (
        "serialized",
        lambda: {"class_name": "FixedLossScale", "config": {"loss_scale_value": 4.0}},
        "compat_lso.LossScaleOptimizer(optimizer, dynamic=False, initial_scale=4)",
    ),
]


@pytest.mark.parametrize(
    "make_loss_scale, replacement",
    [case[1:] for case in REPLACEMENTS],
    ids=[case[0] for case in REPLACEMENTS],
)
def test_warning_names_the_exact_replacement_call(make_loss_scale, replacement):
    loss_scale = make_loss_scale()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        experimental.LossScaleOptimizer(SGD(), loss_scale)
    ours = [
        w
        for w in caught
        if issubclass(w.category, DeprecationWarning) and "compat_lso" in str(w.message)
    ]
    assert len(ours) == 1
    assert replacement in str(ours[0].message)


def test_warning_points_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _line_after()
        experimental.LossScaleOptimizer(SGD(), "dynamic")
    ours = [w for w in caught if "compat_lso" in str(w.message)]
    assert (ours[0].filename, ours[0].lineno) == (__file__, line)


def test_one_warning_per_construction_not_per_import():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        importlib.reload(importlib.import_module("compat_lso"))
        import compat_lso.experimental  # noqa: F401

        assert not [w for w in caught if "compat_lso" in str(w.message)]
        for _ in range(3):
            experimental.LossScaleOptimizer(SGD(), 8)
    assert len([w for w in caught if "compat_lso" in str(w.message)]) == 3


def test_the_new_class_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        compat_lso.LossScaleOptimizer(SGD(), dynamic=False, initial_scale=8)


def _line_after() -> int:
    """The number of the line after the caller's (where the construction under test stands)."""
    import sys

    return sys._getframe(1).f_lineno + 1
