"""Keras 2's legacy optimizers (`tf.keras.optimizers.legacy.X`, TF 2.11-2.15) against Keras 3's
optimizer of the same name: plain data, read by `compat_lso/keras3/legacy_optimizers.py`.

Measured with bench/bench_legacy_optimizers.py on TF 2.15 (the legacy class inside Keras 2's
LossScaleOptimizer) against TF 2.21 (Keras 3's class of the same name inside compat_lso's), a
custom loop of 12 steps whose first six overflow float16 under the dynamic scale: losses, scales
and `iterations` equal for every class below but Nadam (refused, not measured there); the
weights

- bit for bit (`SAME`): SGD (momentum, nesterov), Adadelta, Adamax, Ftrl (with l1, l2,
  shrinkage and beta), and SGD's `decay` given as Keras 3's InverseTimeDecay;
- in the last bits (`LAST_BITS`: the same formulas, which TF 2.15 computes in fused kernels that
  round differently): Adam (amsgrad too; 1.5e-6 relative after 12 steps), RMSprop with momentum
  (centered too; up to 4.9e-6), Adagrad (bit for bit on that data; it adds epsilon elsewhere, see
  NOT_SAME_BECAUSE, which moves the last bits at most);
- not the same rule (`NOT_SAME`): Nadam (Keras 3's momentum schedule is 0.96**t, the legacy
  class's 0.96**(0.004*t): 18% apart after 12 steps).

The conditions below make an otherwise equivalent call another rule. The codemod reads this
module too (`codemods/table/legacy_optimizers.py`, LSO024): one table for both. Nothing here
imports TensorFlow.
"""

from __future__ import annotations

from typing import Final

SAME: Final = "same"
LAST_BITS: Final = "last-bits"
NOT_SAME: Final = "not-same"

# Each legacy class: its TF 2.15 positional parameters (then **kwargs), and how close Keras 3's
# class of the same name comes.
LEGACY_OPTIMIZERS: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    "SGD": (("learning_rate", "momentum", "nesterov", "name"), SAME),
    "Adam": (("learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad", "name"), LAST_BITS),
    "RMSprop": (
        ("learning_rate", "rho", "momentum", "epsilon", "centered", "name"),
        LAST_BITS,
    ),
    "Adagrad": (("learning_rate", "initial_accumulator_value", "epsilon", "name"), LAST_BITS),
    "Adadelta": (("learning_rate", "rho", "epsilon", "name"), SAME),
    "Adamax": (("learning_rate", "beta_1", "beta_2", "epsilon", "name"), SAME),
    "Nadam": (("learning_rate", "beta_1", "beta_2", "epsilon", "name"), NOT_SAME),
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
        SAME,
    ),
}

# Keyword arguments every legacy class took (OptimizerV2's allowed_kwargs); `lr` is the old
# spelling of learning_rate, `decay` divides the learning rate by (1 + decay * iterations).
LEGACY_KEYWORDS: Final = ("clipnorm", "clipvalue", "global_clipnorm", "lr", "decay")

# TF 2.15's default learning rates (Keras 3's are the same): SGD's, else 0.001.
DEFAULT_LEARNING_RATE: Final[dict[str, float]] = {"SGD": 0.01}
# TF 2.15's defaults that the decisions below read (the same as Keras 3's).
DEFAULTS: Final[dict[str, dict[str, float]]] = {
    "RMSprop": {"momentum": 0.0, "epsilon": 1e-7},
    "Adagrad": {"initial_accumulator_value": 0.1, "epsilon": 1e-7},
}

# Why a class, or a call of one, has no Keras 3 equivalent: the argument it turns on and what
# differs. RMSprop without momentum (centered or not) adds epsilon outside the square root in
# TF 2.15 (`lr * g / (sqrt(rms) + epsilon)`) and inside it in Keras 3 (`sqrt(rms + epsilon)`),
# which is a different step wherever rms is near epsilon (small gradients); with momentum both
# add it inside (TF 2.15's fused ResourceApplyRMSProp).
NOT_SAME_BECAUSE: Final[dict[str, tuple[str, str]]] = {
    "Nadam": (
        "Nadam",
        "Keras 3's Nadam decays its momentum as 0.96**step, TF 2.15's legacy Nadam as "
        "0.96**(0.004 * step)",
    ),
    "RMSprop": (
        "momentum",
        "without momentum TF 2.15's legacy RMSprop adds epsilon outside the square root "
        "(lr * g / (sqrt(rms) + epsilon)), Keras 3's inside it (sqrt(rms + epsilon))",
    ),
    "Adagrad": (
        "initial_accumulator_value",
        "TF 2.15's legacy Adagrad adds epsilon outside the square root (sqrt(acc) + epsilon), "
        "Keras 3's inside it (sqrt(acc + epsilon)); the two agree in the last bits only while "
        "epsilon / sqrt(initial_accumulator_value) <= 2**-20",
    ),
}
# Adagrad's accumulator never falls below initial_accumulator_value, so the two denominators
# differ by at most epsilon / sqrt(initial_accumulator_value), relative: within this, last bits.
ADAGRAD_LAST_BITS: Final = 2.0**-20

# What differs where Keras 3's class is used: the warning's words.
DIFFERS: Final[dict[str, str]] = {
    SAME: "the same update rule (TF 2.15's numbers bit for bit where compat-lso measured them)",
    LAST_BITS: (
        "the same formulas, rounded differently (TF 2.15 computes them in a fused kernel): "
        "weights may differ in the last bits"
    ),
}
