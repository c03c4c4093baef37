"""LSO024's data: Keras 2's legacy optimizers against Keras 3's optimizer of the same name.

The classes, their TF 2.15 parameters, how close Keras 3 comes, the keywords and the defaults
are the runtime's (`compat_lso/core/legacy_optimizers.py`, plain data that imports no
TensorFlow, which says what was measured on TF 2.15 against TF 2.21): one table for both. Here
only what the codemod adds: how many positions Keras 3's class shares, and the findings' words.
"""

from __future__ import annotations

from typing import Final

from compat_lso.core import legacy_optimizers as _runtime

LEGACY_SAME: Final = _runtime.SAME
LEGACY_LAST_BITS: Final = _runtime.LAST_BITS
LEGACY_DIFFERENT: Final = _runtime.NOT_SAME

# How many of each class's TF 2.15 positional parameters Keras 3's class of the same name takes
# at the same positions (after them Keras 3 has weight_decay, or Ftrl's l2_shrinkage where
# TF 2.15 had name).
_SHARED_POSITIONS: Final[dict[str, int]] = {
    "SGD": 3,
    "Adam": 5,
    "RMSprop": 5,
    "Adagrad": 3,
    "Adadelta": 3,
    "Adamax": 4,
    "Nadam": 4,
    "Ftrl": 5,
}
# Each legacy class: its TF 2.15 positional parameters, the positions shared, how close it comes.
LEGACY_EQUIVALENTS: Final[dict[str, tuple[tuple[str, ...], int, str]]] = {
    name: (parameters, _SHARED_POSITIONS[name], closeness)
    for name, (parameters, closeness) in _runtime.LEGACY_OPTIMIZERS.items()
}
# OptimizerV2's other keyword arguments: `lr` is renamed learning_rate, `decay` is reported.
LEGACY_KEYWORDS: Final = _runtime.LEGACY_KEYWORDS
LEGACY_DEFAULTS: Final = _runtime.DEFAULTS
LEGACY_ADAGRAD_LAST_BITS: Final = _runtime.ADAGRAD_LAST_BITS

# The argument each LEGACY_DIFFERENT decision turns on (the class itself for Nadam), and the fact.
LEGACY_NOT_SAME: Final[dict[str, tuple[str, str]]] = {
    "Nadam": ("Nadam", "Keras 3's Nadam decays its momentum as 0.96**step, not 0.96**(0.004*step)"),
    "RMSprop": ("momentum", "without momentum Keras 3 adds epsilon inside the square root"),
    "Adagrad": ("initial_accumulator_value", "Keras 3 adds epsilon inside the square root"),
}
# The note at a rewritten call, per closeness.
LEGACY_NOTE: Final[dict[str, str]] = {
    LEGACY_SAME: "Keras 3's {name}: the same update rule (TF 2.15's bits where measured)",
    LEGACY_LAST_BITS: "Keras 3's {name}: the same formulas, weights may differ in the last bits",
}
LEGACY_TF_KERAS_HELP: Final = "keep TF 2.15's class: tf_keras with TF_USE_LEGACY_KERAS=1"
