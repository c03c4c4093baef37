"""LSO024's data: Keras 2's legacy optimizers against Keras 3's optimizer of the same name.

The runtime keeps its own copy (`compat_lso/core/legacy_optimizers.py`, which says what was
measured on TF 2.15 against TF 2.21): the codemod does not import the shim's modules, and
tests/codemods/test_codemod_lso024_legacy_optimizer.py checks that the two tables agree.
"""

from __future__ import annotations

from typing import Final

LEGACY_SAME: Final = "same"
LEGACY_LAST_BITS: Final = "last-bits"
LEGACY_DIFFERENT: Final = "not-same"

# Each legacy class: its TF 2.15 positional parameters, how many of them Keras 3's class of the
# same name takes at the same positions (after them Keras 3 has weight_decay, or Ftrl's
# l2_shrinkage where TF 2.15 had name), and how close Keras 3's class comes.
LEGACY_EQUIVALENTS: Final[dict[str, tuple[tuple[str, ...], int, str]]] = {
    "SGD": (("learning_rate", "momentum", "nesterov", "name"), 3, LEGACY_SAME),
    "Adam": (
        ("learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad", "name"),
        5,
        LEGACY_LAST_BITS,
    ),
    "RMSprop": (
        ("learning_rate", "rho", "momentum", "epsilon", "centered", "name"),
        5,
        LEGACY_LAST_BITS,
    ),
    "Adagrad": (
        ("learning_rate", "initial_accumulator_value", "epsilon", "name"),
        3,
        LEGACY_LAST_BITS,
    ),
    "Adadelta": (("learning_rate", "rho", "epsilon", "name"), 3, LEGACY_SAME),
    "Adamax": (("learning_rate", "beta_1", "beta_2", "epsilon", "name"), 4, LEGACY_SAME),
    "Nadam": (("learning_rate", "beta_1", "beta_2", "epsilon", "name"), 4, LEGACY_DIFFERENT),
    "Ftrl": (
        (
            "learning_rate",
            "learning_rate_power",
            "initial_accumulator_value",
            "l1_regularization_strength",
            "l2_regularization_strength",
            "name",
            "l2_shrinkage_regularization_strength",
            "beta",
        ),
        5,
        LEGACY_SAME,
    ),
}
# OptimizerV2's other keyword arguments: `lr` is renamed learning_rate, `decay` is reported.
LEGACY_KEYWORDS: Final = ("clipnorm", "clipvalue", "global_clipnorm", "lr", "decay")
LEGACY_DEFAULTS: Final[dict[str, dict[str, float]]] = {
    "RMSprop": {"momentum": 0.0, "epsilon": 1e-7},
    "Adagrad": {"initial_accumulator_value": 0.1, "epsilon": 1e-7},
}
# Adagrad: TF 2.15 adds epsilon outside the square root, Keras 3 inside; the two agree in the
# last bits while epsilon / sqrt(initial_accumulator_value) is at most this.
LEGACY_ADAGRAD_LAST_BITS: Final = 2.0**-20
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
