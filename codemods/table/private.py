"""TensorFlow's private Keras mixed-precision packages (LSO014): which names are private, why
each breaks, and the public name each exported one is."""

from __future__ import annotations

from typing import Final

from codemods.table.base import MANUAL, TARGETS, Rule

# TF 2.1-2.3 kept the Keras implementation here; code that imported it directly (to subclass or
# isinstance-check the optimizer) breaks from TF 2.4, when the package was removed.
PRIVATE_KERAS_EXPERIMENTAL: Final = "tensorflow.python.keras.mixed_precision.experimental"
# TF 2.4-2.5 kept tf.keras itself here. From TF 2.6 tf.keras is the keras package, and this is a
# private copy TensorFlow keeps for its own use, whose classes are not tf.keras's: a
# LossScaleOptimizer imported from it rejects tf.keras's optimizers, silently on no version.
PRIVATE_KERAS_TF24: Final = "tensorflow.python.keras.mixed_precision"
# The private modules code imported the loss scale optimizer and the policy from, per package.
PRIVATE_PACKAGES: Final[tuple[str, ...]] = (
    PRIVATE_KERAS_EXPERIMENTAL,
    f"{PRIVATE_KERAS_TF24}.loss_scale_optimizer",
    f"{PRIVATE_KERAS_TF24}.policy",
)
# TF 1.14-2.3's loss scale classes, tf.compat.v1.mixed_precision's today. The module is still
# there, with only these names on TF 2.15 and 2.21 (measured: dir() of each): code that read
# another (TF 2.1-2.3's serialize, deserialize) breaks; the module itself and these do not.
PRIVATE_TRAINING_LOSS_SCALE: Final = "tensorflow.python.training.experimental.loss_scale"
_TRAINING_LOSS_SCALE_KEPT: Final[frozenset[str]] = frozenset(
    {
        *("LossScale", "FixedLossScale", "DynamicLossScale", "get"),
        *("_assign_if_finite", "_is_all_finite", "_op_in_graph_mode"),
        *("abc", "cond", "context", "control_flow_ops", "deprecation", "distribute_lib"),
        *("dtypes", "indexed_slices", "math_ops", "nest", "ops", "reduce_util", "tf_export"),
        *("trackable", "variable_v1", "variables"),
    }
)
# LSO014: the private classes and functions that TF 2.1-2.3 exported (keras_export) as
# tf.keras.mixed_precision.experimental.*, and TF 2.4-2.5 as tf.keras.mixed_precision.*: the
# same objects under their public names.
PRIVATE_PUBLIC: Final[dict[str, str]] = {
    **{
        f"{PRIVATE_KERAS_EXPERIMENTAL}.{module}.{member}": (
            f"tensorflow.keras.mixed_precision.experimental.{member}"
        )
        for module, member in (
            ("loss_scale_optimizer", "LossScaleOptimizer"),
            ("policy", "Policy"),
            ("policy", "global_policy"),
            ("policy", "set_policy"),
        )
    },
    **{
        f"{PRIVATE_KERAS_TF24}.{module}.{member}": f"tensorflow.keras.mixed_precision.{member}"
        for module, member in (
            ("loss_scale_optimizer", "LossScaleOptimizer"),
            ("policy", "Policy"),
            ("policy", "global_policy"),
            ("policy", "set_global_policy"),
        )
    },
    # TF 2.4-2.8 exported these as tf.keras.mixed_precision.experimental.* too (deprecated).
    f"{PRIVATE_KERAS_TF24}.policy.set_policy": (
        "tensorflow.keras.mixed_precision.experimental.set_policy"
    ),
}
# The private modules those come from, held as a value (`... import loss_scale_optimizer as lso`):
# re-pointed where every use is rewritten, as the experimental module is.
PRIVATE_MODULES: Final[dict[str, str]] = {
    f"{package}.{module}": "tensorflow.keras.mixed_precision"
    for package in (PRIVATE_KERAS_EXPERIMENTAL, PRIVATE_KERAS_TF24)
    for module in ("loss_scale_optimizer", "policy")
}


def is_private(qualified: str) -> bool:
    """Whether `qualified` lies in one of TensorFlow's private Keras mixed-precision packages, or
    is a name TF's private loss scale module no longer has."""
    if qualified.startswith(PRIVATE_TRAINING_LOSS_SCALE + "."):
        member = qualified[len(PRIVATE_TRAINING_LOSS_SCALE) + 1 :].partition(".")[0]
        return member not in _TRAINING_LOSS_SCALE_KEPT and not member.startswith("__")
    return any(qualified == p or qualified.startswith(p + ".") for p in PRIVATE_PACKAGES)


def private_fact(qualified: str) -> str:
    """Why a private name breaks: removed (TF 2.1-2.3's package), or not tf.keras's (TF 2.4's)."""
    if qualified.startswith(PRIVATE_KERAS_EXPERIMENTAL):
        return "removed in TF 2.4"
    if qualified.startswith(PRIVATE_TRAINING_LOSS_SCALE):
        return "not in the module on TF 2.15+"
    return "a private copy, not tf.keras's since TF 2.6"


PRIVATE_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO014",
        name="private-keras-mixed-precision",
        summary=(
            "anything from TensorFlow's private packages "
            "tensorflow.python.keras.mixed_precision.experimental (TF 2.1-2.3) and "
            "tensorflow.python.keras.mixed_precision's loss_scale_optimizer and policy (TF 2.4-2.5)"
        ),
        action={"keras2": MANUAL, "keras3": MANUAL, "shim": MANUAL},
        instruction=(
            "import the public name instead (--explain LSO014 lists them), then run the codemod "
            "again"
        ),
        details=(
            "TensorFlow's private package was removed in TF 2.4. Its exported names are the "
            "public ones (loss_scale_optimizer.LossScaleOptimizer is "
            "tf.keras.mixed_precision.experimental.LossScaleOptimizer; policy.Policy, "
            "policy.global_policy and policy.set_policy are tf.keras.mixed_precision.experimental"
            ".*): read through an import of their module or of the name, the codemod migrates "
            "them as those (LSO001, LSO002, LSO004-LSO006). Anything else has no public name: "
            "port it by hand, or import the public name instead and run the codemod again. "
            "TF 2.4-2.5 kept tf.keras itself in tensorflow.python.keras; from TF 2.6 that is a "
            "private copy whose classes are not tf.keras's (its LossScaleOptimizer rejects "
            "tf.keras's optimizers), so code that imported loss_scale_optimizer or policy from "
            "there breaks on every target: their exported names are written as the public ones "
            "(tf.keras.mixed_precision.LossScaleOptimizer, Policy, global_policy, "
            "set_global_policy), which name the objects the code meant on TF 2.4. TF's own "
            "tensorflow.python.training.experimental.loss_scale (tf.compat.v1's loss scales) is "
            "still there, but without TF 2.1-2.3's serialize and deserialize: a name it no "
            "longer has (TF 2.15 and 2.21 have LossScale, FixedLossScale, DynamicLossScale and "
            "get) is reported."
        ),
        example=(
            "from tensorflow.python.keras.mixed_precision.experimental import loss_scale\n"
            "scale = loss_scale.get('dynamic')\n"
        ),
        example_after=dict.fromkeys(TARGETS),
        note=(
            "The exported names, read through `from <private> import loss_scale_optimizer as "
            "lso` (or `policy`, or the name itself), are rewritten as their public names by the "
            "rules for those, the import re-pointed; `# compat-lso: ignore[LSO014]` at the line "
            "still keeps it. Other private paths have no public module to re-point the import "
            "to, so each use is reported; an import nothing uses is removed (it fails on TF 2.4 "
            "and later)."
        ),
    ),
)
