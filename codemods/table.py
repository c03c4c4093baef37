"""Every old spelling, what replaces it on each target, and whether that is safe to apply.

This module is the single source of truth: the rules look their names, codes and manual
instructions up here, and `codemods.catalogue` renders the documentation from it. Nothing in this
module imports the rest of the package.

Qualified names are what a reference means after imports and aliases are resolved
(`tf.keras.mixed_precision.experimental` with `import tensorflow as tf` is
`tensorflow.keras.mixed_precision.experimental`).
"""

from __future__ import annotations

import re
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


_TF = "import tensorflow as tf\n"
_SHIM = "import compat_lso\n"

# The migration rules, one module each under codemods/rules/. The sweep's own codes (LSO1xx) are
# at the end of this module; RULES holds both.
MIGRATION_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO001",
        name="loss-scale-optimizer-call",
        summary=(
            "experimental.LossScaleOptimizer(optimizer, loss_scale) -> "
            "LossScaleOptimizer(inner_optimizer, ...)"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
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
_RULES_PREFILTER_ALONE: Final[dict[Target, tuple[str, ...]]] = {
    # Found without any experimental spelling in the file (the sweep adds its own words below).
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


# == The sweep ====================================================================================
# What each target's TensorFlow/Keras no longer has or no longer understands, for the sweep
# (codemods/sweep.py): after the rules ran, it re-reads the migrated module and checks every
# reference against `gone` (every old name above) and the data below, so a rule that forgets cannot
# leave a silent break. A rule for a new kind of break adds its data here; each entry's `example`
# is a module the sweep must flag on that target (tests/codemods/test_codemod_sweep_table.py).

# TensorFlow roots the sweep resolves names under; nothing else can be gone.
SWEEP_ROOTS: Final[frozenset[str]] = frozenset({"tensorflow", "keras", "tf_keras"})


@dataclass(frozen=True)
class RemovedName:
    """A qualified name, and everything under it, that the target's TensorFlow/Keras lacks."""

    prefix: str
    code: str | None  # the rule that migrates or reports it; None: only the sweep does
    reason: str  # completes "<name> ...": "was removed in Keras 3"
    example: str


@dataclass(frozen=True)
class RemovedMember:
    """An attribute the target's class no longer has (or no longer has as a method)."""

    name: str
    code: str | None
    reason: str
    example: str
    # "any": the name alone identifies it (no other class has it); "loss_scale_optimizer": only on
    # a name last bound, in that scope, to a LossScaleOptimizer call (the rules' own test).
    receiver: Literal["any", "loss_scale_optimizer"] = "any"
    called: bool = False  # True: only a call of it is gone (`loss_scale()`, now a property)


@dataclass(frozen=True)
class UnsupportedCall:
    """Calls of `callees` that the target rejects or reads differently."""

    callees: frozenset[str]
    code: str | None
    reason: str
    example: str
    # keyword -> the literal values it still accepts with the same meaning (empty: none)
    keywords: dict[str, tuple[object, ...]] = field(default_factory=dict)
    max_positional: int | None = None  # more positional arguments than this land elsewhere
    words: tuple[str, ...] = ()  # text a file must contain for the prefilter to pass it


# The Keras 3 spellings of the new class (tf_keras and the shim keep the Keras 2 signature).
KERAS3_LSO: Final[frozenset[str]] = frozenset(
    {
        "tensorflow.keras.mixed_precision.LossScaleOptimizer",
        "tensorflow.compat.v2.keras.mixed_precision.LossScaleOptimizer",
        "keras.mixed_precision.LossScaleOptimizer",
        "keras.optimizers.LossScaleOptimizer",
    }
)
NEW_POLICY: Final[frozenset[str]] = frozenset(
    f"{new}.Policy" for new in KERAS_EXPERIMENTAL.values()
)

REMOVED_NAMES: Final[dict[Target, tuple[RemovedName, ...]]] = {
    # Beyond every old name `classify` knows (gone on every target): none known yet.
    "keras2": (),
    "keras3": (),
    "shim": (),
}

_LOSS_SCALE_CALL = RemovedMember(
    "loss_scale",
    "LSO010",
    "is a property of the new LossScaleOptimizer (a tensor), not a method: calling it fails",
    "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
    "print(opt.loss_scale())\n",
    receiver="loss_scale_optimizer",
    called=True,
)
_KERAS3_LSO_EXAMPLE = "import keras\nopt = keras.optimizers.LossScaleOptimizer(sgd)\n"
REMOVED_MEMBERS: Final[dict[Target, tuple[RemovedMember, ...]]] = {
    "keras2": (_LOSS_SCALE_CALL,),
    "shim": (_LOSS_SCALE_CALL,),
    "keras3": (
        _LOSS_SCALE_CALL,
        *(
            RemovedMember(
                method,
                "LSO011",
                "does not exist in Keras 3",
                f"scaled = self.optimizer.{method}(value)\n",
            )
            for method in ("get_scaled_loss", "get_unscaled_gradients")
        ),
        *(
            RemovedMember(
                attribute,
                None,
                "does not exist on Keras 3's LossScaleOptimizer (it has dynamic_scale and "
                "step_counter)",
                _KERAS3_LSO_EXAMPLE + f"print(opt.{attribute})\n",
                receiver="loss_scale_optimizer",
            )
            for attribute in ("loss_scale", "dynamic", "dynamic_counter")
        ),
    ),
}

_OLD_SIGNATURE_ON_NEW_CLASS = UnsupportedCall(
    NEW_LSO,
    "LSO001",
    "is the old experimental signature; the new LossScaleOptimizer takes (inner_optimizer, "
    "dynamic, initial_scale, dynamic_growth_steps)",
    "import tensorflow as tf\n"
    "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd, loss_scale='dynamic')\n",
    keywords={"loss_scale": (), "optimizer": ()},
    words=("LossScaleOptimizer",),
)
_LOSS_SCALE_ON_NEW_POLICY = UnsupportedCall(
    NEW_POLICY,
    "LSO006",
    "is the old experimental Policy's; the new Policy takes only a name",
    "import tensorflow as tf\n"
    "policy = tf.keras.mixed_precision.Policy('mixed_float16', loss_scale='dynamic')\n",
    keywords={"loss_scale": ()},
    max_positional=1,
    words=("Policy",),
)
UNSUPPORTED_CALLS: Final[dict[Target, tuple[UnsupportedCall, ...]]] = {
    "keras2": (_OLD_SIGNATURE_ON_NEW_CLASS, _LOSS_SCALE_ON_NEW_POLICY),
    "shim": (_OLD_SIGNATURE_ON_NEW_CLASS, _LOSS_SCALE_ON_NEW_POLICY),
    "keras3": (
        _OLD_SIGNATURE_ON_NEW_CLASS,
        _LOSS_SCALE_ON_NEW_POLICY,
        UnsupportedCall(
            KERAS3_LSO,
            None,
            "is Keras 2's signature: Keras 3's LossScaleOptimizer(inner_optimizer, initial_scale, "
            "dynamic_growth_steps) reads a second positional argument as initial_scale and has no "
            "fixed loss scale (dynamic=False raises ValueError)",
            _KERAS3_LSO_EXAMPLE.replace("(sgd)", "(sgd, dynamic=False, initial_scale=128)"),
            keywords={"dynamic": (True,)},
            max_positional=1,
            words=("LossScaleOptimizer",),
        ),
    ),
}


def _sweep_words(target: Target) -> tuple[str, ...]:
    """Text any file with something in the sweep's data for `target` contains."""
    words = [
        member.name + "()"
        if member.called
        else member.name
        if member.receiver == "any"
        else "LossScaleOptimizer"  # the call the receiver is bound to
        for member in REMOVED_MEMBERS[target]
    ]
    for call in UNSUPPORTED_CALLS[target]:
        words.extend(call.words)
    return tuple(dict.fromkeys(words))


PREFILTER_ALONE: Final[dict[Target, tuple[str, ...]]] = {
    target: tuple(dict.fromkeys((*_RULES_PREFILTER_ALONE[target], *_sweep_words(target))))
    for target in TARGETS
}


@dataclass(frozen=True)
class Gone:
    """Why a resolved name breaks on the target."""

    name: str  # the removed name it falls under (itself or a prefix), canonical
    code: str | None  # the rule that rewrites or reports it; None: the sweep alone
    reason: str  # completes "<name> ..."


def canonical(qualified: str) -> str:
    """`tensorflow.compat.v2.X` is the TF2 API `tensorflow.X`, and `compat.v2.compat.v1` is
    `compat.v1`. Only for deciding what is gone: the rules keep the user's spelling."""
    match = _COMPAT.match(qualified)
    if match is None:
        return qualified
    last = match.group(1)[-len(".compat.v1") :]
    return "tensorflow" + ("" if last == ".compat.v2" else last) + qualified[match.end() :]


_COMPAT: Final = re.compile(r"^tensorflow((?:\.compat\.v[12](?=\.|$))+)")


def gone(qualified: str, target: Target) -> Gone | None:
    """What `qualified` (or the module or class it lies under) lacks on `target`, or None."""
    if qualified.partition(".")[0] not in SWEEP_ROOTS:
        return None
    name = canonical(qualified)
    parts = name.split(".")
    removed = {entry.prefix: entry for entry in REMOVED_NAMES[target]}
    for end in range(len(parts), 1, -1):
        prefix = ".".join(parts[:end])
        found = classify(prefix)
        if found is not None and found[0] != "LSO013":
            return Gone(prefix, found[0], _removed_in(prefix))
        if is_old_namespace(prefix):
            return Gone(prefix, None, _removed_in(prefix))
        if prefix in removed:
            return Gone(prefix, removed[prefix].code, removed[prefix].reason)
    return None


def _removed_in(name: str) -> str:
    if name.startswith(PRIVATE_KERAS_EXPERIMENTAL):
        return "is in TensorFlow's private package, removed in TF 2.4"
    return "was removed in TF 2.9"


_SWEEP_TF = "import tensorflow as tf\n"
SWEEP_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO100",
        name="left-unreported",
        summary=(
            "the sweep's safety net: anything in the migrated module that the target lacks or "
            "reads differently, which no rule rewrote or reported"
        ),
        action=dict.fromkeys(TARGETS, MANUAL),
        instruction="migrate it by hand as the message says, or run with --target shim",
        example=_SWEEP_TF + "scale = tf.compat.v2.mixed_precision.experimental.FixedLossScale(8)\n",
        example_after=dict.fromkeys(TARGETS),
        note=(
            "Every finding of this code is a gap in the rules (here: the LossScale classes "
            "spelled through tf.compat.v2); the sweep reports it so that it is never silent."
        ),
    ),
    Rule(
        code="LSO101",
        name="old-import-kept",
        summary=(
            "an import or alias of a removed name, kept because a use of it needs manual work "
            "(or, for an alias nothing here reads, because another module may import it)"
        ),
        action=dict.fromkeys(TARGETS, MANUAL),
        instruction=(
            "this line fails as soon as the module is imported on TF 2.9 and later: migrate the "
            "uses named in the message, then run again (the import is then re-pointed or removed)"
        ),
        example=(
            "from tensorflow.train.experimental import enable_mixed_precision_graph_rewrite\n"
            "opt = enable_mixed_precision_graph_rewrite(opt)\n"
        ),
        example_after=dict.fromkeys(TARGETS),
    ),
    Rule(
        code="LSO102",
        name="binding-not-followed",
        summary=(
            "a name, attribute, parameter or call result that may hold a removed name, bound in "
            "a way the codemod cannot follow (bound more than one way, a fallback import, an "
            "attribute, a parameter)"
        ),
        action=dict.fromkeys(TARGETS, MANUAL),
        instruction=(
            "the codemod cannot tell what this holds here: bind it once to the new module or "
            "class and migrate this use by hand (the message says what it becomes)"
        ),
        example=_SWEEP_TF + "class Trainer:\n"
        "    def __init__(self):\n"
        "        self._mixed_precision = tf.keras.mixed_precision.experimental\n\n"
        "    def setup(self):\n"
        "        self._mixed_precision.set_policy('mixed_float16')\n",
        example_after=dict.fromkeys(TARGETS),
        note=(
            "Reported where the name is used; the line that stores or binds the removed name is "
            "reported too (LSO103, LSO101 or LSO104)."
        ),
    ),
    Rule(
        code="LSO103",
        name="removed-value-escapes",
        summary=(
            "a removed module or class returned, passed on or stored, so that its users are out "
            "of the codemod's reach"
        ),
        action=dict.fromkeys(TARGETS, MANUAL),
        instruction=(
            "hand on the new module or class instead and change its users as the message says "
            "(under --target shim: compat_lso.experimental keeps the old names and signatures)"
        ),
        example=_SWEEP_TF
        + "def mixed_precision_module():\n    return tf.keras.mixed_precision.experimental\n",
        example_after=dict.fromkeys(TARGETS),
        note=(
            "The users the sweep can see in the same module (a parameter it is passed to, an "
            "attribute it is stored in, a call's result) are reported as LSO102."
        ),
    ),
    Rule(
        code="LSO104",
        name="old-version-branch",
        summary=(
            "a use of the removed API under a version gate or feature detection (if version < "
            "2.4, hasattr(..., 'experimental'), try/except ImportError): a branch for TF < 2.4"
        ),
        action=dict.fromkeys(TARGETS, MANUAL),
        instruction=(
            "this branch runs only where the experimental API exists (TF < 2.9; written for TF "
            "< 2.4): delete it if you no longer support those versions, or keep it and suppress "
            "this line with `# compat-lso: ignore[LSO104]`"
        ),
        example=_SWEEP_TF + "if hasattr(tf.keras.mixed_precision, 'experimental'):\n"
        "    wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
        "else:\n"
        "    wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer\n",
        example_after=dict.fromkeys(TARGETS),
        note=(
            "A rule's own finding on such a line says the same at its end, and a use a rule can "
            "rewrite is rewritten as anywhere else."
        ),
    ),
)
SWEEP_CODES: Final[frozenset[str]] = frozenset(rule.code for rule in SWEEP_RULES)

RULES: Final[tuple[Rule, ...]] = (*MIGRATION_RULES, *SWEEP_RULES)
RULES_BY_CODE: Final[dict[str, Rule]] = {rule.code: rule for rule in RULES}

# The catalogue's introduction to the codes above (docs/rules.md, before LSO100).
SWEEP_INTRO: Final = (
    "LSO100-LSO104 are the final sweep's codes. After the rules ran, the sweep re-reads the "
    "migrated module, resolves every name the way the rules do, and checks each reference "
    "against what the target's TensorFlow/Keras no longer has or no longer understands "
    "(codemods/table.py). Each one must have been rewritten or reported at its own line (or "
    "inside a construct reported as a whole, such as a call's arguments); whatever is left is "
    "reported under one of these codes, so `--check` exits 0 only when nothing breaks on the "
    "target. A suppression comment (`# compat-lso: ignore`, or with the sweep's code or the "
    "rule's) on the line, and `--skip`, are respected."
)
