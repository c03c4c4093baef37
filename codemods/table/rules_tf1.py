"""LSO028: TF 1's `tf.contrib.mixed_precision` (LossScaleOptimizer and its loss scale managers),
which TensorFlow removed with the rest of `tf.contrib` in TF 2.0."""

from __future__ import annotations

from typing import Final

from codemods.table.base import MANUAL, TARGETS, TF_IMPORT, Rule

# The module TF 1.13-1.15 had, and what it held (tensorflow/contrib/mixed_precision/__init__.py at
# v1.15.0): none of them exists on a TensorFlow the project supports.
CONTRIB_MIXED_PRECISION: Final = "tensorflow.contrib.mixed_precision"
CONTRIB_MODULE_SHORT: Final = "tf.contrib.mixed_precision"
# What a file that uses it spells (the prefilter lets such a file in: codemods/io/prefilter.py).
CONTRIB_WORD: Final = "contrib"
CONTRIB_MIXED_PRECISION_NAMES: Final[frozenset[str]] = frozenset(
    {
        "LossScaleOptimizer",
        "LossScaleManager",
        "FixedLossScaleManager",
        "ExponentialUpdateLossScaleManager",
    }
)
CONTRIB_HELP: Final = (
    "use tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, loss_scale) for a "
    "tf.compat.v1 optimizer (--explain LSO028)"
)

_LSO028_BEFORE = (
    TF_IMPORT
    + "manager = tf.contrib.mixed_precision.FixedLossScaleManager(128)\n"
    + "opt = tf.contrib.mixed_precision.LossScaleOptimizer(opt, manager)\n"
)

TF1_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO028",
        name="contrib-mixed-precision",
        summary=(
            "TF 1's tf.contrib.mixed_precision (LossScaleOptimizer, FixedLossScaleManager, "
            "ExponentialUpdateLossScaleManager): removed with tf.contrib in TF 2.0"
        ),
        action={"keras2": MANUAL, "keras3": MANUAL, "shim": MANUAL},
        instruction=CONTRIB_HELP,
        details=(
            "TF 1.13-1.15's tf.contrib.mixed_precision wrapped a tf.train optimizer with a loss "
            "scale manager. TF 2 has no tf.contrib: every name of it raises AttributeError (or "
            "ModuleNotFoundError when imported). TF 2's nearest form is "
            "tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, loss_scale), "
            "for a tf.compat.v1 optimizer, with loss_scale a number for a "
            "FixedLossScaleManager(s) or 'dynamic' / "
            "tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale, "
            "increment_period, multiplier); a Keras optimizer takes "
            "tf.keras.mixed_precision.LossScaleOptimizer (or compat_lso's) instead. Nothing is "
            "rewritten: ExponentialUpdateLossScaleManager lowered the scale by decr_ratio "
            "(default 0.8) after decr_every_n_nan_or_inf (default 2) overflows, where TF 2's "
            "dynamic loss scales halve it at every one, so the numbers would change; which "
            "kind of optimizer is wrapped decides the replacement."
        ),
        example=_LSO028_BEFORE,
        example_after=dict.fromkeys(TARGETS),
        note=(
            "Every reference to a tf.contrib.mixed_precision name, and every import of the "
            "module, is reported on every target."
        ),
    ),
)
