"""What each target's TensorFlow/Keras lacks or reads differently: the sweep's data (LSO100-4)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

from codemods.table.base import MANUAL, SHIM_IMPORT, TARGETS, TF_IMPORT, Rule, Target
from codemods.table.base import POLICY_LOSS_SCALE_READ as _POLICY_READ
from codemods.table.names import (
    KERAS_EXPERIMENTAL,
    NEW_LSO,
    RULES_PREFILTER_ALONE,
    classify,
    is_old_namespace,
)
from codemods.table.private import is_private, private_fact
from codemods.table.rules import MIGRATION_RULES
from codemods.table.rules_values import RETURNED_MODULE, STORED_MODULE, shim_holds_its_module

# == The sweep ====================================================================================
# What each target's TensorFlow/Keras no longer has or no longer understands, for the sweep
# (codemods/sweep/findings.py): after the rules ran, it re-reads the migrated module and checks
# every reference against `gone` (every old name above) and the data below, so a rule that forgets
# cannot leave a silent break. A rule for a new kind of break adds its data here; each entry's
# `example` is a module the sweep must flag on that target (test_codemod_sweep_table.py).
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
    # "any": the name alone identifies it; "loss_scale_optimizer": on what may hold one made in
    # the module (meaning/instances.py), and, if `untyped`, on what it cannot type in a module
    # that makes one; "policy": on a name last bound to a new Policy(...) or global_policy().
    receiver: Literal["any", "loss_scale_optimizer", "policy"] = "any"
    called: bool = False  # True: only a call of it is gone (`loss_scale()`, now a property)
    untyped: bool = True  # False: a name other classes have (Keras layers' `dynamic`)
    help: dict[Target, str] = field(default_factory=dict)  # the fix, where `code`'s is not


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
    # A number as the second positional argument is the target's own (Keras 3's initial_scale):
    # code already written for the target, which LSO015 leaves alone too.
    numeric_second_is_native: bool = False
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
# What returns a new Policy: its constructor, and global_policy().
NEW_POLICY_SOURCES: Final[frozenset[str]] = NEW_POLICY | frozenset(
    f"{new}.global_policy" for new in KERAS_EXPERIMENTAL.values()
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
    "is a property of the new LossScaleOptimizer, not a method",
    "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
    "print(opt.loss_scale())\n",
    receiver="loss_scale_optimizer",
    called=True,
)
# The new Policy (Keras 2.4+ and Keras 3's DTypePolicy alike) has no loss_scale: a read of it that
# the experimental Policy's rename leaves behind fails (AttributeError).
_POLICY_LOSS_SCALE = RemovedMember(
    "loss_scale",
    "LSO006",
    "does not exist on the new Policy: the LossScaleOptimizer holds the loss scale",
    "import tensorflow as tf\npolicy = tf.keras.mixed_precision.Policy('mixed_float16')\n"
    "print(policy.loss_scale)\n",
    receiver="policy",
    help=_POLICY_READ,
)
_KERAS3_LSO_EXAMPLE = "import keras\nopt = keras.optimizers.LossScaleOptimizer(sgd)\n"
REMOVED_MEMBERS: Final[dict[Target, tuple[RemovedMember, ...]]] = {
    "keras2": (_LOSS_SCALE_CALL, _POLICY_LOSS_SCALE),
    "shim": (_LOSS_SCALE_CALL, _POLICY_LOSS_SCALE),
    "keras3": (
        _LOSS_SCALE_CALL,
        _POLICY_LOSS_SCALE,
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
                untyped=attribute != "dynamic",
            )
            for attribute in ("loss_scale", "dynamic", "dynamic_counter")
        ),
    ),
}

_OLD_SIGNATURE_ON_NEW_CLASS = UnsupportedCall(
    NEW_LSO,
    "LSO001",
    "is the old experimental signature",
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
            "LSO015",
            "is Keras 2's signature, which Keras 3's LossScaleOptimizer misreads or rejects",
            _KERAS3_LSO_EXAMPLE.replace("(sgd)", "(sgd, dynamic=False, initial_scale=128)"),
            keywords={"dynamic": (True,)},
            max_positional=1,
            numeric_second_is_native=True,
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
    target: tuple(dict.fromkeys((*RULES_PREFILTER_ALONE[target], *_sweep_words(target))))
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
    if is_private(name):
        return f"is in TensorFlow's private package, {private_fact(name)}"
    return "was removed in TF 2.9"


SWEEP_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO100",
        name="left-unreported",
        summary=(
            "the sweep's safety net: anything in the migrated module that the target lacks or "
            "reads differently, which no rule rewrote or reported"
        ),
        action=dict.fromkeys(TARGETS, MANUAL),
        instruction="migrate it by hand as the help says, or run with --target shim",
        example=TF_IMPORT + "scale = tf.compat.v2.mixed_precision.experimental.FixedLossScale(8)\n",
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
            "migrate the uses the help names, then run again (the import is then "
            "re-pointed or removed)"
        ),
        details=(
            "This line fails as soon as the module is imported on TF 2.9 and later: "
            "migrate the uses the help names, then run again (the import is then "
            "re-pointed or removed)."
        ),
        example=(
            "from tensorflow.keras.mixed_precision.experimental import get_layer_policy\n"
            "policy = get_layer_policy(layer)\n"
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
        instruction="bind it once to the new module or class, and migrate this use by hand",
        details=(
            "The codemod cannot tell what this holds here: bind it once to the new "
            "module or class and migrate this use by hand (the help says what it becomes)."
        ),
        example=STORED_MODULE,
        example_after=shim_holds_its_module(STORED_MODULE),
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
            "hand on the new module or class instead and change its users (--target shim keeps "
            "the old names)"
        ),
        details=(
            "Hand on the new module or class instead (--target shim: compat_lso.experimental "
            "keeps the old names and signatures). The experimental module becomes "
            "tf.keras.mixed_precision: set_policy -> set_global_policy, LossScaleOptimizer now "
            "takes (inner_optimizer, dynamic, initial_scale, dynamic_growth_steps), Policy no "
            "loss_scale, and the LossScale classes move to tf.compat.v1.mixed_precision."
        ),
        example=RETURNED_MODULE,
        example_after=shim_holds_its_module(RETURNED_MODULE),
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
            "delete the branch if no TensorFlow you support runs it, or add `# compat-lso: "
            "ignore[LSO104]` here"
        ),
        details=(
            "Mostly a branch for TF < 2.9: delete it if no TensorFlow you support runs it, or add "
            "`# compat-lso: ignore[LSO104]`. The fact names the branch and its gate. Where a "
            "version test (`tf.__version__.startswith('2.2.')`, a parsed version below 2.12) "
            "never runs it on TF >= 2.12, nothing in it is rewritten and its findings are notes; "
            "a flag spelling a TF version (`compat.IS_PREV_TF_2_4_0`) is undecided."
        ),
        example=TF_IMPORT + "if hasattr(tf.keras.mixed_precision, 'experimental'):\n"
        "    wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
        "else:\n"
        "    wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer\n",
        # On --target shim the other branch's class moves to compat_lso (LSO016).
        example_after={
            "keras2": None,
            "keras3": None,
            "shim": SHIM_IMPORT
            + TF_IMPORT
            + "if hasattr(tf.keras.mixed_precision, 'experimental'):\n"
            "    wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
            "else:\n"
            "    wrapper_class = compat_lso.LossScaleOptimizer\n",
        },
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
    "(codemods/table/removed.py). Each one must have been rewritten or reported at its own line "
    "(or inside a construct reported as a whole, such as a call's arguments); whatever is left is "
    "reported under one of these codes, so `--check` exits 0 only when nothing breaks on the "
    "target. A suppression comment (`# compat-lso: ignore`, or with the sweep's code or the "
    "rule's) on the line, and `--skip`, are respected."
)
