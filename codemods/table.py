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
    # Per target, an instruction that replaces `instruction` there (Keras 3 needs its own words).
    instructions: dict[Target, str] = field(default_factory=dict)
    # Targets where the rule is `safe` for some forms and reports the others (the note says
    # which): the catalogue shows "rewritten where safe, else reported" there.
    partly: frozenset[Target] = frozenset()

    def instruction_on(self, target: Target) -> str:
        """What the user must do by hand where this rule reports on `target`."""
        return self.instructions.get(target, self.instruction)


# Where the shim target sends what it cannot express with the new Keras names.
SHIM_MODULE: Final = "compat_lso"
SHIM_LSO: Final = "compat_lso.LossScaleOptimizer"
SHIM_EXPERIMENTAL: Final = "compat_lso.experimental"
SHIM_EXPERIMENTAL_LSO: Final = f"{SHIM_EXPERIMENTAL}.LossScaleOptimizer"

_TF = "import tensorflow as tf\n"
_SHIM = "import compat_lso\n"

# What every keras3 finding about TF 2.4-2.15 code says changes once Keras 3's class runs it.
KERAS3_BEHAVIOUR: Final = (
    "behaviour on Keras 3: the dynamic loss scale has no floor at 1 (it keeps halving on "
    "overflow), doubles without checking that the doubled scale is finite, and a skipped step "
    "does not advance `iterations`; use --target shim to keep TF 2.4's rule"
)
_TRAIN_STEP = (
    _TF + "class Model(tf.keras.Model):\n"
    "    def train_step(self, data):\n"
    "        x, y = data\n"
    "        with tf.GradientTape() as tape:\n"
    "            loss = self.compiled_loss(y, self(x, training=True))\n"
    "            scaled_loss = self.optimizer.{scale}(loss)\n"
    "        scaled_grads = tape.gradient(scaled_loss, self.trainable_variables)\n"
    "        grads = {unscale}\n"
    "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n"
    "        return {{'loss': loss}}\n"
)
_LSO011_BEFORE = _TRAIN_STEP.format(
    scale="get_scaled_loss", unscale="self.optimizer.get_unscaled_gradients(scaled_grads)"
)
_LSO015_BEFORE = (
    _TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), True, "
    "1024, 500)\n"
)
_LSO016_BEFORE = (
    _TF + "class ScaledOptimizer(tf.keras.mixed_precision.LossScaleOptimizer):\n    pass\n"
)
_LSO017_BEFORE = (
    _TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\ntf.print(opt.loss_scale)\n"
)
# Keras 3's only fixed loss scaling, and the compile() flag it needs (see LSO015).
_KERAS3_FIXED = (
    "pass loss_scale_factor=N to the inner optimizer's constructor and use that optimizer "
    "without a LossScaleOptimizer; give compile() auto_scale_loss=False, or under the "
    "'mixed_float16' policy it wraps the optimizer in a dynamic LossScaleOptimizer, which "
    "switches loss_scale_factor off"
)

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
        # A scale known only at run time is reported on keras2 and keras3, a fixed one on keras3.
        partly=frozenset({"keras2", "keras3"}),
        instruction=(
            "construct the new LossScaleOptimizer by hand: loss_scale='dynamic' -> no argument; a "
            "number N -> dynamic=False, initial_scale=N; DynamicLossScale(a, b) -> "
            "initial_scale=a, dynamic_growth_steps=b (a multiplier other than 2 has no "
            "equivalent), or run with --target shim, which keeps the old constructor as "
            "compat_lso.experimental.LossScaleOptimizer"
        ),
        instructions={
            "keras3": (
                "construct Keras 3's LossScaleOptimizer by hand: loss_scale='dynamic' -> "
                "LossScaleOptimizer(inner_optimizer); DynamicLossScale(a, b) -> "
                "initial_scale=a, dynamic_growth_steps=b (a multiplier other than 2 has no "
                "equivalent); a fixed loss scale N has no LossScaleOptimizer on Keras 3: "
                f"{_KERAS3_FIXED}; or run with --target shim, which keeps the old constructor as "
                "compat_lso.experimental.LossScaleOptimizer; " + KERAS3_BEHAVIOUR
            ),
        },
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
            "Safe when loss_scale is 'dynamic', a number, or FixedLossScale(x) / "
            "DynamicLossScale(a, b) written in the call, whatever their arguments: `x`, `a` and "
            "`b` move as written, in the order written, into initial_scale= and "
            "dynamic_growth_steps=, so they are evaluated as before (after the optimizer "
            "argument, once). A loss scale bound to a local name once and used only there is "
            "followed when its arguments are literals (moving an expression down to the call "
            "would evaluate it later). A loss_scale only known at run time, or a multiplier other "
            "than 2, is reported (keras2, keras3) or kept on "
            "compat_lso.experimental.LossScaleOptimizer (shim). Keras 3 has no fixed "
            "LossScaleOptimizer: there a fixed scale becomes `loss_scale_factor=N` on the inner "
            "optimizer where that optimizer is constructed in the call and the result goes only "
            "to compile() (which then gets `auto_scale_loss=False`) or to the optimizer's own "
            "methods, as for LSO015; otherwise it is reported."
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
        summary=(
            "experimental.Policy(name[, loss_scale]) -> Policy(name); loss_scale dropped where "
            "Model.compile does the same without it"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction=(
            "the new Policy takes no loss_scale: drop the argument and give the loss scale to the "
            "optimizer instead, before compile (LossScaleOptimizer(opt, ...); compile leaves a "
            "LossScaleOptimizer as it is); compile wraps the optimizer in the default dynamic "
            "loss scaling under 'mixed_float16' and in nothing otherwise"
        ),
        example=(
            "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
            "policy = mixed_precision.Policy('mixed_float16', loss_scale='dynamic')\n"
            "mixed_precision.set_policy(policy)\n"
        ),
        example_after=dict.fromkeys(
            TARGETS,
            "from tensorflow.keras import mixed_precision\n"
            "policy = mixed_precision.Policy('mixed_float16')\n"
            "mixed_precision.set_global_policy(policy)\n",
        ),
        note=(
            "The loss scale of an experimental Policy was used in one place: Model.compile "
            "wrapped the optimizer with it. TF 2.4-2.8 wrap the optimizer of a model under "
            "Policy('mixed_float16', loss_scale='dynamic') in LossScaleOptimizerV1(opt, "
            "DynamicLossScale()) and under the new Policy('mixed_float16') in "
            "LossScaleOptimizer(opt): both dynamic, starting at 2**15, doubling after 2000 "
            "finite steps (keras/engine/training.py, `_get_optimizer`, Keras 2.4-2.8). Keras "
            "2.9-2.15 and Keras 3 (`auto_scale_loss`) wrap exactly the models whose policy is "
            "named 'mixed_float16', in the same default scaling. So loss_scale is dropped when it "
            "is 'auto' (the old default: dynamic for 'mixed_float16', none otherwise), 'dynamic' "
            "or DynamicLossScale() with its default arguments under the name 'mixed_float16', or "
            "None under another literal name; tested against TensorFlow's own copy of Keras "
            "2.4-2.8 and the installed tf.keras on TF 2.15 and 2.21 "
            "(tests/codemods/test_codemod_lso006_policy_compile.py). Only the wrapper's class "
            "differs on TF 2.4-2.8 (the experimental subclass before, the new class after; LSO002 "
            "rewrites isinstance checks to the new class, which accepts both). Any other "
            "loss_scale (a number, another LossScale, 'dynamic' on another policy, None on "
            "'mixed_float16', a value or a policy name only known at run time) is reported on "
            "keras2 and keras3; on shim it goes to compat_lso.experimental.Policy, which keeps it "
            "and applies it in compile once compat_lso.install() has run, and a finding says so "
            "(without install(), Keras wraps "
            "a 'mixed_float16' model in its own dynamic loss scaling)."
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
            # LSO015 also moves the TF 2.4 constructor to the shim's class.
            "shim": _SHIM + "opt = compat_lso.LossScaleOptimizer(sgd)\nprint(opt.loss_scale)\n",
        },
        note=(
            "Only where `opt` is, in the same scope, last bound to a LossScaleOptimizer call (old, "
            "new, or the shim's)."
        ),
    ),
    Rule(
        code="LSO011",
        name="manual-loss-scaling",
        summary=(
            "get_scaled_loss / get_unscaled_gradients -> scale_loss, with the gradients passed "
            "still scaled to apply_gradients"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": "none"},
        instruction=(
            "Keras 3 has no get_scaled_loss/get_unscaled_gradients: use opt.scale_loss(loss) and "
            "pass the still-scaled gradients to opt.apply_gradients, which unscales them itself "
            "(do not unscale twice), or use --target shim"
        ),
        instructions={
            "keras3": (
                "Keras 3 has no get_scaled_loss/get_unscaled_gradients: call "
                "opt.scale_loss(loss) and pass the still-scaled gradients straight to "
                "opt.apply_gradients, which checks them for inf/nan, divides them by the loss "
                "scale and updates it; code that needs unscaled gradients before that moves "
                "into the inner optimizer (clipping: its clipnorm=, global_clipnorm= or "
                "clipvalue=, applied after the division) or works on a copy divided by "
                "opt.dynamic_scale (logging); an all-reduce (Horovod, tf.distribute) takes the "
                "still-scaled gradients; a loss scaled in one function and unscaled in another "
                "is changed in both by hand; " + KERAS3_BEHAVIOUR
            ),
        },
        example=_LSO011_BEFORE,
        example_after={
            "keras2": _LSO011_BEFORE,
            "keras3": _TRAIN_STEP.format(scale="scale_loss", unscale="scaled_grads"),
            "shim": _LSO011_BEFORE,
        },
        note=(
            "On keras3 the two calls are rewritten together or not at all (one Fix): per "
            "function and receiver (`self.optimizer`, `opt`, ... as written), every "
            "get_scaled_loss(x) becomes scale_loss(x) and the one get_unscaled_gradients(g) is "
            "dropped, but only where its result flows straight into the same receiver's "
            "apply_gradients(zip(grads, vars)) (directly, through one name, or through one "
            "`grads_and_vars = zip(...)`) and is read nowhere else. Anything else (clipping, "
            "logging, an all-reduce, accumulation, the gradients returned, the two calls in "
            "different functions) is reported at both calls with what is in the way. The "
            "receiver cannot be typed statically (`self.optimizer` in a train_step); the method "
            "names are unique to the loss scale optimizer. `opt.minimize(...)` on a name bound "
            "to a TF 2.4 LossScaleOptimizer is reported too: Keras 3 optimizers have no "
            "minimize. keras2 and shim keep these methods."
        ),
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
    Rule(
        code="LSO015",
        name="tf24-loss-scale-optimizer-call",
        summary=(
            "TF 2.4-2.15 LossScaleOptimizer(inner_optimizer, dynamic, initial_scale, "
            "dynamic_growth_steps) calls, which Keras 3 misreads"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": SAFE},
        instruction=(
            "call compat_lso.LossScaleOptimizer with the same arguments: it keeps TF 2.4's "
            "signature and Keras 2's meaning on every backend"
        ),
        instructions={
            "keras3": (
                "Keras 3's LossScaleOptimizer(inner_optimizer, initial_scale=2**15, "
                "dynamic_growth_steps=2000, name=None) takes no `dynamic` and reads a second "
                "positional argument as initial_scale: pass initial_scale= and "
                "dynamic_growth_steps= by keyword and drop dynamic=True; a fixed scale "
                f"(dynamic=False, initial_scale=N) has no LossScaleOptimizer: {_KERAS3_FIXED}; "
                + KERAS3_BEHAVIOUR
            ),
        },
        example=_LSO015_BEFORE,
        example_after={
            "keras2": _LSO015_BEFORE,
            "keras3": _LSO015_BEFORE.replace(
                "True, 1024, 500", "initial_scale=1024, dynamic_growth_steps=500"
            ),
            "shim": _SHIM + _LSO015_BEFORE.replace("tf.keras.mixed_precision.", "compat_lso."),
        },
        note=(
            "A call is TF 2.4 code when it passes `dynamic` (by keyword or as a bool literal in "
            "second place); Keras 3 code when it passes `name=` or a number in second place; "
            "otherwise (keywords only, or a run-time second argument) the file decides: it is "
            "Keras 3 code when it shows Keras 3's API (scale_loss, dynamic_scale, "
            "loss_scale_factor, keras.optimizers.LossScaleOptimizer, a Keras 3 call) and none "
            "of TF 2.4's (get_scaled_loss, get_unscaled_gradients, dynamic_counter, a TF 2.4 "
            "call, the experimental API), and TF 2.4 code otherwise. Keras 3 code is left alone "
            "on every target. "
            "keras3: positional arguments become keywords, dynamic=True and None defaults are "
            "dropped; dynamic=False, initial_scale=N becomes the inner optimizer's "
            "loss_scale_factor=N "
            "(`LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), dynamic=False, "
            "initial_scale=128)` -> `tf.keras.optimizers.SGD(0.1, loss_scale_factor=128)`) "
            "where the inner optimizer is a Keras optimizer constructed in the call and the "
            "result goes only to compile() (given `auto_scale_loss=False`, or under "
            "'mixed_float16' it would be wrapped in a dynamic LossScaleOptimizer that switches "
            "loss_scale_factor off) and to the optimizer's own apply_gradients, scale_loss, "
            "get_scaled_loss, get_unscaled_gradients, iterations and learning_rate; otherwise "
            "(stored on self, returned, passed on, read as a LossScaleOptimizer) it is reported. "
            "A run-time `dynamic` or second positional argument is reported. "
            "shim: the class moves to compat_lso.LossScaleOptimizer with the arguments as "
            "written. keras2: nothing to do."
        ),
    ),
    Rule(
        code="LSO016",
        name="tf24-loss-scale-optimizer-reference",
        summary=(
            "any other use of the TF 2.4-2.15 LossScaleOptimizer class in TF 2.4 code "
            "(subclassing, aliases, passing it around)"
        ),
        action={"keras2": "none", "keras3": MANUAL, "shim": SAFE},
        instruction=(
            "use compat_lso.LossScaleOptimizer, which keeps TF 2.4's signature and Keras 2's "
            "meaning on every backend"
        ),
        instructions={
            "keras3": (
                "a subclass of Keras 3's LossScaleOptimizer gets Keras 3's constructor "
                "(inner_optimizer, initial_scale, dynamic_growth_steps, name) and its methods: "
                "pass initial_scale=/dynamic_growth_steps= by keyword to super().__init__, drop "
                "`dynamic`, and move overrides of get_scaled_loss/get_unscaled_gradients to "
                "scale_loss/apply; or subclass compat_lso.LossScaleOptimizer (--target shim); "
                + KERAS3_BEHAVIOUR
            ),
        },
        example=_LSO016_BEFORE,
        example_after={
            "keras2": _LSO016_BEFORE,
            "keras3": None,
            "shim": _SHIM + "class ScaledOptimizer(compat_lso.LossScaleOptimizer):\n    pass\n",
        },
        note=(
            "shim: in TF 2.4 code (as LSO015 decides it) every reference to the class other "
            "than a call moves to compat_lso.LossScaleOptimizer: base classes, aliases "
            "(`LSO = tf.keras.mixed_precision.LossScaleOptimizer`, re-pointed once, their uses "
            "follow), arguments, `.from_config`. isinstance/issubclass checks and annotations "
            "keep the native class, which accepts the shim's objects on every backend (the "
            "shim's class subclasses it) and also the ones compile() wraps under "
            "'mixed_float16'; checking against compat_lso.LossScaleOptimizer would reject "
            "those. keras3: a subclass is reported; other references mean the same class "
            "there. keras2: nothing to do."
        ),
    ),
    Rule(
        code="LSO017",
        name="loss-scale-optimizer-state",
        summary=(
            "opt.loss_scale / opt.dynamic_counter / opt.dynamic reads, which Keras 3 does not have"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": "none"},
        instruction="read the state through compat_lso.LossScaleOptimizer (--target shim)",
        instructions={
            "keras3": (
                "Keras 3's LossScaleOptimizer has no loss_scale, dynamic_counter or dynamic: "
                "the current scale is "
                "tf.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, "
                "tf.float32) (dynamic_scale exists once the optimizer is built), the counter "
                "is opt.step_counter (int32, from the first step), and every Keras 3 "
                "LossScaleOptimizer is dynamic; a fixed scale is the inner optimizer's "
                "loss_scale_factor; " + KERAS3_BEHAVIOUR
            ),
        },
        example=_LSO017_BEFORE,
        example_after={
            "keras2": _LSO017_BEFORE,
            "keras3": _LSO017_BEFORE.replace(
                "opt.loss_scale",
                "tf.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, "
                "tf.float32)",
            ),
            # LSO015 moves the constructor; the read then works as written.
            "shim": _SHIM
            + _LSO017_BEFORE.replace("tf.keras.mixed_precision.LossScaleOptimizer", SHIM_LSO),
        },
        note=(
            "keras3, where `opt` is, in the same scope, last bound to a dynamic TF 2.4 "
            "LossScaleOptimizer call: `opt.loss_scale` -> "
            "`tf.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, "
            "tf.float32)` (a float32 tensor holding the scale at the time of the read, as "
            "TF 2.4's was; `dynamic_scale` alone is a variable that changes afterwards and "
            "exists only once the optimizer is built), `opt.dynamic_counter` -> "
            "`opt.step_counter` (the same values; int32 instead of int64, and only once built), "
            "`opt.dynamic` -> `True`. Reads on an untyped receiver: `.dynamic_counter` (a name "
            "only the loss scale optimizer has) is rewritten the same way; `.loss_scale` on "
            "something named like an optimizer (`self.optimizer`, `opt`, `model.optimizer`) "
            "is reported, as is any read on a fixed-scale optimizer or where no `tensorflow` "
            "import is in scope. `opt.loss_scale()` is LSO010."
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
_RULES_PREFILTER_ALONE: Final[dict[Target, tuple[str, ...]]] = {
    # Found without any experimental spelling in the file (the sweep adds its own words below).
    "keras2": ("loss_scale()",),
    # TF 2.4-2.15 code on the non-experimental class (LSO011, LSO015-LSO017).
    "keras3": ("LossScaleOptimizer", ".loss_scale", *sorted(TF24_MARKERS)),
    "shim": ("loss_scale()", "LossScaleOptimizer"),
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
            "LSO015",
            "is Keras 2's signature: Keras 3's LossScaleOptimizer(inner_optimizer, initial_scale, "
            "dynamic_growth_steps) reads a second positional argument as initial_scale and has no "
            "fixed loss scale (dynamic=False raises ValueError)",
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
        # On --target shim the other branch's class moves to compat_lso (LSO016).
        example_after={
            "keras2": None,
            "keras3": None,
            "shim": _SHIM + _SWEEP_TF + "if hasattr(tf.keras.mixed_precision, 'experimental'):\n"
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
    "(codemods/table.py). Each one must have been rewritten or reported at its own line (or "
    "inside a construct reported as a whole, such as a call's arguments); whatever is left is "
    "reported under one of these codes, so `--check` exits 0 only when nothing breaks on the "
    "target. A suppression comment (`# compat-lso: ignore`, or with the sweep's code or the "
    "rule's) on the line, and `--skip`, are respected."
)
