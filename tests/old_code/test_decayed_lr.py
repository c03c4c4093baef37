"""The learning rate NVIDIA's BERT logs, and what LSO019 rewrites it to, on the installed Keras.

The trainer logs `optimizer._optimizer._decayed_lr('float32')`: Keras 2's OptimizerV2 evaluates
its learning rate schedule at `iterations` (the applied steps) and casts it. Keras 3 has no
`_decayed_lr`; the codemod writes `tf.cast(optimizer.inner_optimizer.learning_rate, 'float32')`,
Keras 3's `learning_rate` being the schedule at `iterations` too. Both are checked against the
schedules' values worked out by hand, after each of a few applied steps: the old line on Keras 2
(TF 2.15, a legacy optimizer under Keras 2's LossScaleOptimizer, as BERT builds it), the new line
on Keras 3. On Keras 2 a legacy optimizer's `learning_rate` is the schedule itself, which
tf.cast refuses: --target shim, whose code runs there too, keeps the line reported.
"""

from __future__ import annotations

import os

import pytest
import tensorflow as tf
from packaging.version import Version

LEGACY_KERAS = os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true")
KERAS_3 = Version(tf.__version__).release >= (2, 16) and not LEGACY_KERAS

STEPS = 6
# PiecewiseConstantDecay(boundaries=[2, 4], values=[0.1, 0.01, 0.001]): 0.1 while step <= 2,
# 0.01 while step <= 4, then 0.001. PolynomialDecay(0.1, decay_steps=4, end_learning_rate=0.02):
# 0.1 - 0.08 * min(step, 4) / 4, i.e. 0.1, 0.08, 0.06, 0.04, then 0.02.
SCHEDULES = {
    "piecewise": (
        lambda: tf.keras.optimizers.schedules.PiecewiseConstantDecay([2, 4], [0.1, 0.01, 0.001]),
        [0.1, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001],
    ),
    "polynomial": (
        lambda: tf.keras.optimizers.schedules.PolynomialDecay(0.1, 4, end_learning_rate=0.02),
        [0.1, 0.08, 0.06, 0.04, 0.02, 0.02, 0.02],
    ),
}


def _rates(inner, read) -> list[float]:
    """`read(opt)` before any step and after each of STEPS steps applied through a (dynamic)
    loss scale optimizer over `inner`, as the trainer reads it after its step."""
    opt = tf.keras.mixed_precision.LossScaleOptimizer(inner)
    var = tf.Variable([1.0, 2.0])
    rates = []
    for _ in range(STEPS + 1):
        rates.append(float(read(opt)))
        opt.apply_gradients([(tf.constant([0.5, -0.5]), var)])
    return rates


@pytest.mark.skipif(not KERAS_3, reason="the rewrite is for Keras 3 (--target keras3)")
@pytest.mark.parametrize("name", SCHEDULES)
def test_the_rewrite_reads_the_schedule_at_the_applied_steps(name):
    schedule, expected = SCHEDULES[name]
    rates = _rates(
        tf.keras.optimizers.Adam(schedule()),
        lambda opt: tf.cast(opt.inner_optimizer.learning_rate, "float32"),  # the rewrite
    )
    assert rates == pytest.approx(expected, rel=1e-6)


@pytest.mark.skipif(KERAS_3, reason="Keras 3's optimizers have no _decayed_lr (what LSO019 fixes)")
@pytest.mark.parametrize("name", SCHEDULES)
def test_keras_2s_decayed_lr_is_the_same_schedule_value(name):
    schedule, expected = SCHEDULES[name]
    rates = _rates(
        tf.keras.optimizers.legacy.Adam(schedule()),
        lambda opt: opt._optimizer._decayed_lr("float32"),  # BERT's line
    )
    assert rates == pytest.approx(expected, rel=1e-6)


@pytest.mark.skipif(KERAS_3, reason="on Keras 3, learning_rate is the schedule's value (above)")
def test_keras_2s_legacy_learning_rate_is_the_schedule_itself():
    # Why --target shim, whose code also runs on Keras 2 (TF 2.12-2.15), keeps reporting it:
    # there the rewrite would fail where BERT's line works.
    schedule, _ = SCHEDULES["piecewise"]
    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.legacy.Adam(schedule()))
    with pytest.raises(ValueError, match="unsupported type"):
        tf.cast(opt.inner_optimizer.learning_rate, "float32")
