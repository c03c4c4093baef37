"""The old names and where each goes per target: the experimental namespaces and their members,
the LossScale classes' homes, TF 2.4-2.15's class and its Keras 3 spelling, the prefilter's words.

Qualified names are what a reference means after imports and aliases are resolved
(`tf.keras.mixed_precision.experimental` with `import tensorflow as tf` is
`tensorflow.keras.mixed_precision.experimental`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from codemods.table.base import SHIM_EXPERIMENTAL, SHIM_EXPERIMENTAL_LSO, SHIM_LSO, Target
from codemods.table.private import (
    PRIVATE_KERAS_EXPERIMENTAL,
    PRIVATE_MODULES,
    PRIVATE_PUBLIC,
    is_private,
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
    "disable_mixed_precision_graph_rewrite": "LSO008",
    "MixedPrecisionLossScaleOptimizer": "LSO009",
}

# The last part of every old name a rule knows; anything else is looked up only when it hangs off a
# plain name or an `experimental` namespace (where LSO012 reports unknown members).
MEMBER_NAMES: Final[frozenset[str]] = frozenset({*KERAS_MEMBERS, *TF_MEMBERS, "experimental"})

# What compat_lso.experimental holds (compat_lso/experimental.py's __all__): the shim's help points
# an old name there only where it has it (not the private package's AutoCastVariable & co.).
SHIM_EXPERIMENTAL_NAMES: Final[frozenset[str]] = frozenset(
    {
        *KERAS_MEMBERS,
        *LOSS_SCALE_CLASSES,
        "enable_mixed_precision_graph_rewrite",
        "disable_mixed_precision_graph_rewrite",
    }
)
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

# -- TF 2.4-2.15 code on the non-experimental class (LSO011, LSO015-LSO017) --------------------
# The class as TF 2.4-2.15 code spelled it; Keras 3 keeps these names for its own class, which
# reads the same calls differently. (tf_keras keeps Keras 2's class: code on it is left alone.)
TF24_LSO: Final[frozenset[str]] = frozenset(
    {
        "tensorflow.keras.mixed_precision.LossScaleOptimizer",
        "tensorflow.compat.v2.keras.mixed_precision.LossScaleOptimizer",
        "keras.mixed_precision.LossScaleOptimizer",
    }
)
# Spellings only Keras 3 has: a call through one is Keras 3 code.
KERAS3_ONLY_LSO: Final[frozenset[str]] = frozenset(
    {"keras.optimizers.LossScaleOptimizer", "tensorflow.keras.optimizers.LossScaleOptimizer"}
)
# Every constructor of a loss scale optimizer, of any generation: a module that calls one makes
# one, and its Keras 2-only members are looked for on what the module cannot type
# (meaning/instances.py).
ANY_LSO: Final[frozenset[str]] = frozenset(
    {*OLD_LSO, *NEW_LSO, *TF24_LSO, *KERAS3_ONLY_LSO, SHIM_LSO, SHIM_EXPERIMENTAL_LSO}
)
# Libraries whose calls return no loss scale optimizer unless given one (meaning/instances.py); a
# call into any other module (the user's own `from models import build`) may return one. The
# standard library counts too (sys.stdlib_module_names).
KNOWN_LIBRARIES: Final[frozenset[str]] = frozenset(
    {"tensorflow", "keras", "tf_keras", "numpy", "absl", "yaml", "packaging", "pandas", "horovod"}
    | {"ml_collections", "omegaconf", "hydra", "easydict"}
)
TF24_PARAMETERS: Final[tuple[str, ...]] = (
    "inner_optimizer",
    "dynamic",
    "initial_scale",
    "dynamic_growth_steps",
)
KERAS3_PARAMETERS: Final[tuple[str, ...]] = (
    "inner_optimizer",
    "initial_scale",
    "dynamic_growth_steps",
    "name",
)
# Names only Keras 3's API has (methods, attributes, keywords): a file using them and nothing of
# TF 2.4's is Keras 3 code, left alone.
KERAS3_MARKERS: Final[frozenset[str]] = frozenset(
    {"scale_loss", "dynamic_scale", "loss_scale_factor"}
)
# ... and names only the TF 2.4 API has.
TF24_MARKERS: Final[frozenset[str]] = frozenset(
    {"get_scaled_loss", "get_unscaled_gradients", "dynamic_counter"}
)
# Keras 2's loss scale optimizer members that code feature-tests (`hasattr(opt, "get_scaled_loss")`)
# -> the rule that rewrites their uses on keras3, and the Keras 3 member every Keras 3 optimizer
# has from construction on that the rewritten code uses instead ("" where there is none: Keras 3
# makes `step_counter` and `dynamic_scale` in build(), so a guard on them is False before the
# first step). rules/_member_guards.py makes such a guard follow the rewrite.
KERAS2_GUARDED_MEMBERS: Final[dict[str, tuple[str, str]]] = {
    "get_scaled_loss": ("LSO011", "scale_loss"),
    "get_unscaled_gradients": ("LSO011", ""),
    "loss_scale": ("LSO017", ""),
    "dynamic_counter": ("LSO017", ""),
    "dynamic": ("LSO017", ""),
}
# Keras optimizer modules whose classes take Keras 3's loss_scale_factor= (LSO015's fixed scale).
KERAS3_OPTIMIZER_MODULES: Final[frozenset[str]] = frozenset(
    {"tensorflow.keras.optimizers", "keras.optimizers"}
)


@dataclass(frozen=True)
class TargetApi:
    """What one target no longer understands of TF 2.4-2.15 code on the non-experimental class.

    Data, so that a rule that forgets cannot leave a silent break: the final sweep reads it. Every
    mapping goes from the TF 2.4 name to the code of the rule that rewrites or reports it.
    """

    # A call of a TF24_LSO name with more positional arguments than this is read differently.
    positional: int | None
    # Constructor keywords the target refuses (or accepts only with one value).
    keywords: dict[str, str]
    # Methods and attributes (read, not called) the target's class does not have.
    methods: dict[str, str]
    attributes: dict[str, str]
    # The TF24_LSO class itself must leave TF 2.4 code, except in isinstance/issubclass checks
    # and annotations: code for calls, code for every other reference.
    class_moves: tuple[str, str] | None
    # Base classes: a TF 2.4 subclass of the class must be rewritten or reported.
    subclass: str | None
    # What each has become there, where it has an exact spelling (None: dropped).
    replacements: dict[str, str | None] = field(default_factory=dict)


TF24_API: Final[dict[Target, TargetApi]] = {
    # Keras 2 is the TF 2.4 API: nothing to do.
    "keras2": TargetApi(
        positional=None, keywords={}, methods={}, attributes={}, class_moves=None, subclass=None
    ),
    "keras3": TargetApi(
        positional=1,
        keywords={"dynamic": "LSO015"},
        # minimize: on a receiver known to be a TF 2.4 LossScaleOptimizer (a common name).
        methods={
            "get_scaled_loss": "LSO011",
            "get_unscaled_gradients": "LSO011",
            "minimize": "LSO011",
        },
        attributes={"loss_scale": "LSO017", "dynamic_counter": "LSO017", "dynamic": "LSO017"},
        class_moves=None,
        subclass="LSO016",
        replacements={
            "get_scaled_loss": "scale_loss",
            "get_unscaled_gradients": None,
            "minimize": None,
            "dynamic": None,
            "dynamic_counter": "step_counter",
            "loss_scale": "dynamic_scale",
        },
    ),
    # The shim keeps all of the TF 2.4 API, but only on its own class: the native class must go.
    "shim": TargetApi(
        positional=None,
        keywords={},
        methods={},
        attributes={},
        class_moves=("LSO015", "LSO016"),
        subclass="LSO016",
        replacements=dict.fromkeys(TF24_LSO, SHIM_LSO),
    ),
}

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
# LSO018: `x.dtype.name` in a module using mixed precision. The prefilter lets a file in for it
# only when it holds both (codemods/io/prefilter.py): `.dtype.name` alone is common.
DTYPE_NAME_TARGETS: Final[frozenset[Target]] = frozenset({"keras3", "shim"})
DTYPE_NAME_WORD: Final = ".dtype.name"
MIXED_PRECISION_WORDS: Final[tuple[str, ...]] = (
    "mixed_precision",
    "mixed_float16",
    "mixed_bfloat16",
    "LossScaleOptimizer",
)
# LSO019: Keras 2's optimizer forms on `model.optimizer`, compile()'s loss scale optimizer in a
# module that says mixed_float16 (codemods/io/prefilter.py lets a file in when it holds both; a
# loss scale optimizer constructed in the file is found by the words below).
SURFACE_WORDS: Final[tuple[str, ...]] = (
    ".variables()",
    ".lr",
    "._optimizer",
    "weights",
    "get_slot",
    "_decayed_lr",
    ".iterations",
    ".loss_scale",  # and TF 2.4's state below, read on compile()'s wrapper (shim)
    ".dynamic",
)
_REWRITE = "enable_mixed_precision_graph_rewrite"  # TensorFlow's TF1 function too (LSO008)
RULES_PREFILTER_ALONE: Final[dict[Target, tuple[str, ...]]] = {
    # Found without any experimental spelling in the file (the sweep adds its own words below).
    "keras2": ("loss_scale()", _REWRITE),
    # TF 2.4-2.15 code on the non-experimental class (LSO011, LSO015-LSO017).
    # A policy setter: compile() under 'mixed_float16' wraps in Keras 3's class (LSO022's note
    # on keras3, LSO023's wrap or compat_lso.install() on shim).
    "keras3": (
        "LossScaleOptimizer",
        ".loss_scale",
        *sorted(TF24_MARKERS),
        "set_global_policy",
        "set_policy",
        _REWRITE,
    ),
    "shim": ("loss_scale()", "LossScaleOptimizer", "set_global_policy", "set_policy", _REWRITE),
}


def classify(qualified: str) -> tuple[str, str] | None:
    """The rule code and the member name for an old-API qualified name, or None if it is not one."""
    module, _, member = qualified.rpartition(".")
    if is_private(qualified):
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


def brief(qualified: str) -> str:
    """`display`, with the middle of a long private name left out (the line shows it in full):
    `tensorflow.python.keras....loss_scale_optimizer.LossScaleOptimizer`."""
    shown = display(qualified)
    if not shown.startswith("tensorflow.python.keras.") or len(shown) <= 60:
        return shown
    tail = shown.split(".")[-2:]
    joined = ".".join(tail)
    return "tensorflow.python.keras...." + (joined if len(joined) <= 50 else tail[-1])


def is_old_namespace(qualified: str) -> bool:
    """Whether `qualified` names a removed experimental mixed-precision module itself."""
    return qualified in KERAS_EXPERIMENTAL or qualified == "tensorflow.mixed_precision.experimental"


def shim_experimental(qualified: str) -> str | None:
    """On the shim target, the compat_lso.experimental name a removed experimental module (or its
    member that the shim's module has) stands for: what LSO025 re-points it to. Else None."""
    if _shim_old_namespace(qualified):
        return SHIM_EXPERIMENTAL
    module, _, member = qualified.rpartition(".")
    if _shim_old_namespace(module) and member in SHIM_EXPERIMENTAL_NAMES:
        return f"{SHIM_EXPERIMENTAL}.{member}"
    return None


def _shim_old_namespace(qualified: str) -> bool:
    return is_old_namespace(qualified) and not qualified.startswith(PRIVATE_KERAS_EXPERIMENTAL)


def new_home(qualified: str, target: Target) -> str | None:
    """The new qualified name for an old one on `target`; None where there is no safe equivalent."""
    if qualified in PRIVATE_MODULES:
        return PRIVATE_MODULES[qualified]
    public = PRIVATE_PUBLIC.get(qualified)
    qualified = public or qualified
    found = classify(qualified)
    if found is None:  # TF 2.4-2.5's private path to a public name: that name
        return public or KERAS_EXPERIMENTAL.get(qualified)
    code, member = found
    module = qualified.rpartition(".")[0]
    if code == "LSO007":
        return (
            f"{SHIM_EXPERIMENTAL}.{member}"
            if target == "shim"
            else f"{TF_V1_MIXED_PRECISION}.{member}"
        )
    if code == "LSO008":
        # The shim's functions are what `compat_lso run` gives the old names; no other target
        # has one that keeps the numbers for both kinds of optimizer.
        return f"{SHIM_EXPERIMENTAL}.{member}" if target == "shim" else None
    if code == "LSO009":
        return f"{TF_V1_MIXED_PRECISION}.{member}"
    if code == "LSO013":
        return SHIM_LSO
    if code in ("LSO001", "LSO004", "LSO005", "LSO006") and module in KERAS_EXPERIMENTAL:
        return f"{KERAS_EXPERIMENTAL[module]}.{KERAS_MEMBERS[member][1]}"
    return None


def public_of_private(base: str, qualified: str) -> str:
    """`qualified`, read through an import of `base`, by its public name where it is one of the
    private package's exported names (PRIVATE_PUBLIC, LSO014) and `base` can be re-pointed to
    where that name lives now (the private module, or the name itself): the rules then migrate
    it as the public name. Anything else keeps its private name, which LSO014 reports. Compat
    repeats are collapsed first (collapse_compat)."""
    qualified = collapse_compat(qualified)
    if base in PRIVATE_MODULES or base in PRIVATE_PUBLIC:
        return PRIVATE_PUBLIC.get(qualified, qualified)
    return qualified


def collapse_compat(qualified: str) -> str:
    """`tensorflow.compat.v2.compat.v2.keras` (`import tensorflow.compat.v2 as tf` and then
    `tf.compat.v2.keras`) -> `tensorflow.compat.v2.keras`: each compat module has `compat` too."""
    if ".compat.v" not in qualified:
        return qualified
    match = _REPEATED_COMPAT.match(qualified)
    if match is None:
        return qualified
    return "tensorflow" + match.group(2) + qualified[match.end() :]


_REPEATED_COMPAT = re.compile(r"^tensorflow(\.compat\.v[12])*(\.compat\.v[12])(?=\.|$)")
