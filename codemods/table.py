"""Every old spelling, what replaces it on each target, and whether that is safe to apply.

This module is the single source of truth: the rules look their names, codes and manual
instructions up here, and `codemods.catalogue` renders the documentation from it. Nothing in this
module imports the rest of the package.

Qualified names are what a reference means after imports and aliases are resolved
(`tf.keras.mixed_precision.experimental` with `import tensorflow as tf` is
`tensorflow.keras.mixed_precision.experimental`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

Target = Literal["keras2", "keras3", "shim"]
TARGETS: Final[tuple[Target, ...]] = ("keras2", "keras3", "shim")

TARGET_HELP: Final[dict[Target, str]] = {
    "keras2": "TF 2.4-2.15 tf.keras and the tf_keras package (Keras 2 API)",
    "keras3": "TF 2.16+ tf.keras / keras (Keras 3 API)",
    "shim": "compat_lso, which runs on every supported TensorFlow/Keras generation",
}

SAFE: Final = "safe"
MANUAL: Final = "manual"
Action = Literal["safe", "manual", "none"]


@dataclass(frozen=True)
class Rule:
    """One migration rule: what it matches, and per target whether it rewrites or reports."""

    code: str
    name: str
    summary: str
    # Per target: "safe" (rewritten), "manual" (reported only) or "none" (nothing to do there).
    action: dict[Target, Action]
    # What the user must do by hand where the rule reports; `{target}`-independent wording.
    instruction: str
    # Catalogue example: the old code, and the rewrite per target (None: reported, unchanged).
    example: str = ""
    example_after: dict[Target, str | None] = field(default_factory=dict)
    # Some rules are safe only when their argument is statically known; said in the catalogue.
    note: str = ""
    # Targets where the rule is `safe` for some forms and reports the others (the note says
    # which): the catalogue shows "rewritten where safe, else reported" there.
    partly: frozenset[Target] = frozenset()


_TF = "import tensorflow as tf\n"
_SHIM = "import compat_lso\n"

RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO001",
        name="loss-scale-optimizer-call",
        summary=(
            "experimental.LossScaleOptimizer(optimizer, loss_scale) -> "
            "LossScaleOptimizer(inner_optimizer, ...)"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        # A scale known only at run time is reported on keras2 and keras3, a fixed one on keras3.
        partly=frozenset({"keras2", "keras3"}),
        instruction=(
            "construct the new LossScaleOptimizer by hand: loss_scale='dynamic' -> no argument; a "
            "number N -> dynamic=False, initial_scale=N; DynamicLossScale(a, b) -> "
            "initial_scale=a, dynamic_growth_steps=b (a multiplier other than 2 has no "
            "equivalent), or run with --target shim, which keeps the old constructor as "
            "compat_lso.experimental.LossScaleOptimizer"
        ),
        example=_TF + "sgd = tf.keras.optimizers.SGD()\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, loss_scale=128)\n",
        example_after={
            "keras2": _TF + "sgd = tf.keras.optimizers.SGD()\n"
            "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd, dynamic=False, "
            "initial_scale=128)\n",
            "keras3": None,
            "shim": _SHIM + _TF + "sgd = tf.keras.optimizers.SGD()\n"
            "opt = compat_lso.LossScaleOptimizer(sgd, dynamic=False, initial_scale=128)\n",
        },
        note=(
            "Safe when loss_scale is 'dynamic', a number, FixedLossScale(N) or "
            "DynamicLossScale(...) with literal arguments (also through a local name bound once "
            "and used only there). A value only known at run time, or a multiplier other than 2, "
            "is reported (keras2, keras3) or kept on compat_lso.experimental.LossScaleOptimizer "
            "(shim). Keras 3 has no fixed loss scale: reported."
        ),
    ),
    Rule(
        code="LSO002",
        name="loss-scale-optimizer-isinstance",
        summary="isinstance/issubclass against the experimental class -> the new class",
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction="check against the non-experimental LossScaleOptimizer",
        example=_TF
        + "scaled = isinstance(opt, tf.keras.mixed_precision.experimental.LossScaleOptimizer)\n",
        example_after={
            "keras2": _TF
            + "scaled = isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)\n",
            "keras3": _TF
            + "scaled = isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)\n",
            "shim": _SHIM + "scaled = isinstance(opt, compat_lso.LossScaleOptimizer)\n",
        },
        note=(
            "The experimental class subclasses the new one, so the new check accepts both (TF 2.4 "
            "guidance)."
        ),
    ),
    Rule(
        code="LSO003",
        name="loss-scale-optimizer-reference",
        summary="any other use of the experimental class (subclassing, passing it around)",
        action={"keras2": MANUAL, "keras3": MANUAL, "shim": SAFE},
        instruction=(
            "the new LossScaleOptimizer takes (inner_optimizer, dynamic, initial_scale, "
            "dynamic_growth_steps) instead of (optimizer, loss_scale): adapt the subclass or "
            "factory, or use --target shim (compat_lso.experimental.LossScaleOptimizer keeps the "
            "old signature)"
        ),
        example=_TF
        + "class MyOptimizer(tf.keras.mixed_precision.experimental.LossScaleOptimizer):\n"
        + "    pass\n",
        example_after={
            "keras2": None,
            "keras3": None,
            "shim": _SHIM
            + "class MyOptimizer(compat_lso.experimental.LossScaleOptimizer):\n    pass\n",
        },
    ),
    Rule(
        code="LSO004",
        name="set-policy",
        summary="experimental.set_policy -> set_global_policy",
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction="call mixed_precision.set_global_policy",
        example="from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
        "mixed_precision.set_policy('mixed_float16')\n",
        example_after=dict.fromkeys(
            TARGETS,
            "from tensorflow.keras import mixed_precision\n"
            "mixed_precision.set_global_policy('mixed_float16')\n",
        ),
    ),
    Rule(
        code="LSO005",
        name="global-policy",
        summary="experimental.global_policy -> global_policy",
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction="call mixed_precision.global_policy",
        example=_TF + "policy = tf.keras.mixed_precision.experimental.global_policy()\n",
        example_after=dict.fromkeys(
            TARGETS, _TF + "policy = tf.keras.mixed_precision.global_policy()\n"
        ),
    ),
    Rule(
        code="LSO006",
        name="policy",
        summary="experimental.Policy(name) -> Policy(name); a loss_scale argument is reported",
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction=(
            "the new Policy takes no loss_scale: drop the argument and give the loss scale to the "
            "optimizer instead (LossScaleOptimizer(opt, ...)); Model.compile wraps the optimizer "
            "with dynamic loss scaling under 'mixed_float16'"
        ),
        example=(
            "from tensorflow.keras.mixed_precision.experimental import Policy\n"
            "policy = Policy('mixed_float16')\n"
        ),
        example_after=dict.fromkeys(
            TARGETS,
            "from tensorflow.keras.mixed_precision import Policy\n"
            "policy = Policy('mixed_float16')\n",
        ),
        note=(
            "Policy(name, loss_scale=...) is reported on every target: the loss scale has no home "
            "on Policy."
        ),
    ),
    Rule(
        code="LSO007",
        name="loss-scale-classes",
        summary=(
            "tf.mixed_precision.experimental.*LossScale / tf.train.experimental.*LossScale outside "
            "the optimizer call"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction="use tf.compat.v1.mixed_precision.<class>",
        example=_TF + "scale = tf.mixed_precision.experimental.FixedLossScale(8)\n",
        example_after={
            "keras2": _TF + "scale = tf.compat.v1.mixed_precision.FixedLossScale(8)\n",
            "keras3": _TF + "scale = tf.compat.v1.mixed_precision.FixedLossScale(8)\n",
            "shim": _SHIM + "scale = compat_lso.experimental.FixedLossScale(8)\n",
        },
        note=(
            "Inside a LossScaleOptimizer call the loss scale is translated away by LSO001 instead."
        ),
    ),
    Rule(
        code="LSO008",
        name="graph-rewrite",
        summary="enable_mixed_precision_graph_rewrite (TF2 API)",
        action={"keras2": MANUAL, "keras3": MANUAL, "shim": MANUAL},
        instruction=(
            "the graph rewrite is gone from the TF2 API: call "
            "tf.keras.mixed_precision.set_global_policy('mixed_float16') before building the model "
            "and wrap the optimizer in tf.keras.mixed_precision.LossScaleOptimizer"
        ),
        example=_TF + "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n",
        example_after=dict.fromkeys(TARGETS),
    ),
    Rule(
        code="LSO009",
        name="mixed-precision-loss-scale-optimizer",
        summary=(
            "tf.train.experimental.MixedPrecisionLossScaleOptimizer -> "
            "tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction=(
            "use tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer (graph mode, v1 "
            "optimizers)"
        ),
        example=_TF
        + "opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, 'dynamic')\n",
        example_after=dict.fromkeys(
            TARGETS,
            _TF + "opt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer("
            "opt, 'dynamic')\n",
        ),
    ),
    Rule(
        code="LSO010",
        name="loss-scale-call",
        summary="opt.loss_scale() (the old LossScale object) -> opt.loss_scale",
        action={"keras2": SAFE, "keras3": MANUAL, "shim": SAFE},
        instruction=(
            "Keras 3 has no loss_scale attribute: read opt.dynamic_scale (a variable holding the "
            "current scale) or use --target shim"
        ),
        example=_TF
        + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\nprint(opt.loss_scale())\n",
        example_after={
            "keras2": _TF
            + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\nprint(opt.loss_scale)\n",
            "keras3": None,
            "shim": _TF
            + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\nprint(opt.loss_scale)\n",
        },
        note=(
            "Only where `opt` is, in the same scope, last bound to a LossScaleOptimizer call (old, "
            "new, or the shim's)."
        ),
    ),
    Rule(
        code="LSO011",
        name="manual-loss-scaling",
        summary="get_scaled_loss / get_unscaled_gradients",
        action={"keras2": "none", "keras3": MANUAL, "shim": "none"},
        instruction=(
            "Keras 3 has no get_scaled_loss/get_unscaled_gradients: use opt.scale_loss(loss) and "
            "pass the still-scaled gradients to opt.apply_gradients, which unscales them itself "
            "(do not unscale twice), or use --target shim"
        ),
        example="scaled = self.optimizer.get_scaled_loss(loss)\n",
        example_after={
            "keras2": "scaled = self.optimizer.get_scaled_loss(loss)\n",
            "keras3": None,
            "shim": "scaled = self.optimizer.get_scaled_loss(loss)\n",
        },
    ),
    Rule(
        code="LSO012",
        name="unknown-experimental-member",
        summary="any other member of a removed experimental mixed-precision namespace",
        action={"keras2": MANUAL, "keras3": MANUAL, "shim": MANUAL},
        instruction=(
            "this member has no known equivalent outside the removed experimental namespace: port "
            "it by hand"
        ),
        example=_TF + "policy = tf.keras.mixed_precision.experimental.get_layer_policy(layer)\n",
        example_after=dict.fromkeys(TARGETS),
    ),
    Rule(
        code="LSO013",
        name="shim-experimental-loss-scale-optimizer",
        summary=(
            "compat_lso.experimental.LossScaleOptimizer(optimizer, loss_scale) -> "
            "compat_lso.LossScaleOptimizer(...)"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction="nothing to do: compat_lso.experimental.LossScaleOptimizer keeps working",
        example=_SHIM + "opt = compat_lso.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        example_after=dict.fromkeys(TARGETS, _SHIM + "opt = compat_lso.LossScaleOptimizer(opt)\n"),
        note=(
            "The second step for code that first moved onto the shim's experimental class (its "
            "DeprecationWarning names the same replacement). The loss scale is translated as in "
            "LSO001; one only known at run time is left on the experimental class, which keeps "
            "working, and not reported."
        ),
    ),
    Rule(
        code="LSO014",
        name="private-keras-mixed-precision",
        summary=(
            "anything from TensorFlow's private package "
            "tensorflow.python.keras.mixed_precision.experimental"
        ),
        action={"keras2": MANUAL, "keras3": MANUAL, "shim": MANUAL},
        instruction=(
            "TensorFlow's private package was removed in TF 2.4: import the public name instead "
            "(loss_scale_optimizer.LossScaleOptimizer -> "
            "tf.keras.mixed_precision.experimental.LossScaleOptimizer, policy.Policy -> "
            "tf.keras.mixed_precision.experimental.Policy, loss_scale.* -> "
            "tf.mixed_precision.experimental.*), then run the codemod again to migrate that"
        ),
        example=(
            "from tensorflow.python.keras.mixed_precision.experimental import (\n"
            "    loss_scale_optimizer as lso,\n"
            ")\n"
            "scaled = isinstance(opt, lso.LossScaleOptimizer)\n"
        ),
        example_after=dict.fromkeys(TARGETS),
        note=(
            "Private module paths have no public equivalent module to re-point the import to, so "
            "each use is reported; an import nothing uses is removed (it fails on TF 2.4 and "
            "later)."
        ),
    ),
)

RULES_BY_CODE: Final[dict[str, Rule]] = {rule.code: rule for rule in RULES}

# The removed experimental namespaces, each with the module that replaces it.
KERAS_EXPERIMENTAL: Final[dict[str, str]] = {
    "tensorflow.keras.mixed_precision.experimental": "tensorflow.keras.mixed_precision",
    "tensorflow.compat.v2.keras.mixed_precision.experimental": (
        "tensorflow.compat.v2.keras.mixed_precision"
    ),
    # The TF 2.4 page lists this compat alias; tf.compat.v1.keras.mixed_precision itself lacks
    # set_global_policy & co. (TF 2.15), so its members go to tf.keras.mixed_precision.
    "tensorflow.compat.v1.keras.mixed_precision.experimental": "tensorflow.keras.mixed_precision",
    "keras.mixed_precision.experimental": "keras.mixed_precision",
    "tf_keras.mixed_precision.experimental": "tf_keras.mixed_precision",
}
# Removed TF2 homes of the LossScale classes and the graph rewrite; tf.compat.v1 keeps them.
TF_EXPERIMENTAL: Final[tuple[str, ...]] = (
    "tensorflow.mixed_precision.experimental",
    "tensorflow.train.experimental",
)
TF_V1_MIXED_PRECISION: Final = "tensorflow.compat.v1.mixed_precision"
# TF 2.1-2.3 kept the Keras implementation here; code that imported it directly (to subclass or
# isinstance-check the optimizer) breaks from TF 2.4, when the package was removed.
PRIVATE_KERAS_EXPERIMENTAL: Final = "tensorflow.python.keras.mixed_precision.experimental"

# Members of a Keras experimental namespace and where they went (same module, new name).
KERAS_MEMBERS: Final[dict[str, tuple[str, str]]] = {
    # old member: (rule code, new member)
    "LossScaleOptimizer": ("LSO001", "LossScaleOptimizer"),
    "set_policy": ("LSO004", "set_global_policy"),
    "global_policy": ("LSO005", "global_policy"),
    "Policy": ("LSO006", "Policy"),
}
LOSS_SCALE_CLASSES: Final[tuple[str, ...]] = ("LossScale", "FixedLossScale", "DynamicLossScale")
TF_MEMBERS: Final[dict[str, str]] = {
    **dict.fromkeys(LOSS_SCALE_CLASSES, "LSO007"),
    "enable_mixed_precision_graph_rewrite": "LSO008",
    "MixedPrecisionLossScaleOptimizer": "LSO009",
}

# The last part of every old name a rule knows; anything else is looked up only when it hangs off a
# plain name or an `experimental` namespace (where LSO012 reports unknown members).
MEMBER_NAMES: Final[frozenset[str]] = frozenset({*KERAS_MEMBERS, *TF_MEMBERS, "experimental"})

# Where the shim target sends what it cannot express with the new Keras names.
SHIM_MODULE: Final = "compat_lso"
SHIM_LSO: Final = "compat_lso.LossScaleOptimizer"
SHIM_EXPERIMENTAL: Final = "compat_lso.experimental"
SHIM_EXPERIMENTAL_LSO: Final = f"{SHIM_EXPERIMENTAL}.LossScaleOptimizer"

# Loss-scale constructors recognised inside a LossScaleOptimizer call, wherever they live
# (the removed TF2 paths and the tf.compat.v1 ones that still exist).
_LOSS_SCALE_HOMES: Final[tuple[str, ...]] = (
    *TF_EXPERIMENTAL,
    *KERAS_EXPERIMENTAL,
    TF_V1_MIXED_PRECISION,
    "tensorflow.compat.v1.mixed_precision.experimental",
    "tensorflow.compat.v1.train.experimental",
    SHIM_EXPERIMENTAL,
)
FIXED_LOSS_SCALE: Final[frozenset[str]] = frozenset(
    f"{home}.FixedLossScale" for home in _LOSS_SCALE_HOMES
)
DYNAMIC_LOSS_SCALE: Final[frozenset[str]] = frozenset(
    f"{home}.DynamicLossScale" for home in _LOSS_SCALE_HOMES
)

# The new class, wherever it is spelled; `opt.loss_scale()` is rewritten on instances of these.
NEW_LSO: Final[frozenset[str]] = frozenset(
    {f"{new}.LossScaleOptimizer" for new in KERAS_EXPERIMENTAL.values()}
    | {"keras.optimizers.LossScaleOptimizer", SHIM_LSO}
)
OLD_LSO: Final[frozenset[str]] = frozenset(
    f"{old}.LossScaleOptimizer" for old in KERAS_EXPERIMENTAL
)

# DynamicLossScale(initial_loss_scale=2**15, increment_period=2000, multiplier=2.)
DYNAMIC_LOSS_SCALE_PARAMS: Final[tuple[str, ...]] = (
    "initial_loss_scale",
    "increment_period",
    "multiplier",
)
DYNAMIC_LOSS_SCALE_DEFAULTS: Final[dict[str, float]] = {
    "initial_loss_scale": 2.0**15,
    "increment_period": 2000,
    "multiplier": 2.0,
}
# Old keyword -> new keyword of the new constructor.
NEW_KEYWORDS: Final[dict[str, str]] = {
    "initial_loss_scale": "initial_scale",
    "increment_period": "dynamic_growth_steps",
}

# Text that any file with something to migrate must contain; everything else is never parsed.
PREFILTER_ALL: Final[tuple[str, ...]] = ("experimental",)
PREFILTER_ANY: Final[tuple[str, ...]] = ("mixed_precision", "LossScale", "loss_scale")
PREFILTER_ALONE: Final[dict[Target, tuple[str, ...]]] = {
    # Found without any experimental spelling in the file.
    "keras2": ("loss_scale()",),
    "keras3": ("loss_scale()", "get_scaled_loss", "get_unscaled_gradients"),
    "shim": ("loss_scale()",),
}


def classify(qualified: str) -> tuple[str, str] | None:
    """The rule code and the member name for an old-API qualified name, or None if it is not one."""
    module, _, member = qualified.rpartition(".")
    if qualified == PRIVATE_KERAS_EXPERIMENTAL or qualified.startswith(
        PRIVATE_KERAS_EXPERIMENTAL + "."
    ):
        return "LSO014", member
    if module in KERAS_EXPERIMENTAL:
        code = KERAS_MEMBERS.get(member, ("LSO012", member))[0]
        if member in LOSS_SCALE_CLASSES:
            code = "LSO007"
        return code, member
    if module in TF_EXPERIMENTAL and member in TF_MEMBERS:
        # tf.train.experimental keeps unrelated members (PythonState, ...): only ours are matched.
        return TF_MEMBERS[member], member
    if module == "tensorflow.mixed_precision.experimental":
        return "LSO012", member
    if qualified == SHIM_EXPERIMENTAL_LSO:
        return "LSO013", member
    return None


def display(qualified: str) -> str:
    """`tensorflow.keras.mixed_precision.X` -> `tf.keras.mixed_precision.X`, as users write it."""
    # `tensorflow.python` is not reachable as `tf.python`: private paths are shown in full.
    if qualified.startswith("tensorflow.") and not qualified.startswith("tensorflow.python."):
        return "tf." + qualified.removeprefix("tensorflow.")
    return qualified


def is_old_namespace(qualified: str) -> bool:
    """Whether `qualified` names a removed experimental mixed-precision module itself."""
    return qualified in KERAS_EXPERIMENTAL or qualified == "tensorflow.mixed_precision.experimental"


def new_home(qualified: str, target: Target) -> str | None:
    """The new qualified name for an old one on `target`; None where there is no safe equivalent."""
    found = classify(qualified)
    if found is None:
        return KERAS_EXPERIMENTAL.get(qualified)
    code, member = found
    module = qualified.rpartition(".")[0]
    if code == "LSO007":
        return (
            f"{SHIM_EXPERIMENTAL}.{member}"
            if target == "shim"
            else f"{TF_V1_MIXED_PRECISION}.{member}"
        )
    if code == "LSO009":
        return f"{TF_V1_MIXED_PRECISION}.{member}"
    if code == "LSO013":
        return SHIM_LSO
    if code in ("LSO001", "LSO004", "LSO005", "LSO006") and module in KERAS_EXPERIMENTAL:
        return f"{KERAS_EXPERIMENTAL[module]}.{KERAS_MEMBERS[member][1]}"
    return None
