"""The rules for TF 2.1-2.8 code on the experimental API (removed in TF 2.9): LSO001-LSO005,
LSO007-LSO010, LSO012-LSO014 (LSO006, the Policy, is in rules_policy.py). One module each under
codemods/rules/."""

from __future__ import annotations

from typing import Final

from codemods.table.base import (
    KERAS3_FIXED,
    MANUAL,
    RUN_TIME_LOSS_SCALE,
    SAFE,
    SHIM_IMPORT,
    TARGETS,
    TF_IMPORT,
    Rule,
)

EXPERIMENTAL_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO001",
        name="loss-scale-optimizer-call",
        summary=(
            "experimental.LossScaleOptimizer(optimizer, loss_scale) -> "
            "LossScaleOptimizer(inner_optimizer, ...)"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        # Reported: a run-time scale not a name/attribute (keras3: or with no fixed spelling), an
        # inexact fixed one.
        partly=frozenset({"keras2", "keras3"}),
        instruction=(
            "construct the new LossScaleOptimizer by hand (--explain LSO001 maps each "
            "loss_scale), or use --target shim"
        ),
        details=(
            "Construct the new LossScaleOptimizer by hand: loss_scale='dynamic' -> no "
            "argument; a number N -> dynamic=False, initial_scale=N; DynamicLossScale(a, b) -> "
            "initial_scale=a, dynamic_growth_steps=b (a multiplier other than 2 has no "
            "equivalent), or run with --target shim, which keeps the old constructor as "
            "compat_lso.experimental.LossScaleOptimizer. On --target keras3: construct Keras 3's "
            "LossScaleOptimizer(inner_optimizer, initial_scale=a, dynamic_growth_steps=b) by "
            "hand (a fixed scale N: the inner optimizer's loss_scale_factor=N, see --explain "
            "LSO001), or use --target shim; Keras 3's dynamic loss-scale rule differs from TF "
            "2.4's (compat-lso-migrate --explain LSO022); --target shim keeps TF 2.4's."
        ),
        instructions={
            "keras3": (
                "construct Keras 3's LossScaleOptimizer by hand (--explain LSO001 maps each "
                "loss_scale), or use --target shim"
            ),
        },
        example=TF_IMPORT + "sgd = tf.keras.optimizers.SGD()\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, loss_scale=128)\n",
        example_after={
            "keras2": TF_IMPORT + "sgd = tf.keras.optimizers.SGD()\n"
            "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd, dynamic=False, "
            "initial_scale=128)\n",
            "keras3": None,
            "shim": SHIM_IMPORT + TF_IMPORT + "sgd = tf.keras.optimizers.SGD()\n"
            "opt = compat_lso.LossScaleOptimizer(sgd, dynamic=False, initial_scale=128)\n",
        },
        note=(
            "Safe when loss_scale is 'dynamic', a number, or FixedLossScale(x) / "
            "DynamicLossScale(a, b) written in the call, whatever their arguments: `x`, `a` and "
            "`b` move as written, in the order written, into initial_scale= and "
            "dynamic_growth_steps=, so they are evaluated as before (after the optimizer "
            "argument, once). A loss scale bound to a local name once and used only there is "
            "followed when its arguments are literals (moving an expression down to the call "
            f"would evaluate it later). {RUN_TIME_LOSS_SCALE} Any other loss_scale only known "
            "at run time, or a multiplier other than 2, is reported (keras2, keras3) or kept on "
            "compat_lso.experimental.LossScaleOptimizer (shim). Keras 3 has no fixed "
            "LossScaleOptimizer: there a fixed scale becomes `loss_scale_factor=N` on the inner "
            "optimizer where that optimizer is constructed in the call and the result goes only "
            "to compile() (which then gets `auto_scale_loss=False`) or to the optimizer's own "
            "methods, as for LSO015; otherwise it is reported. By hand on keras3: "
            "loss_scale='dynamic' -> LossScaleOptimizer(inner_optimizer); DynamicLossScale(a, b) "
            "-> initial_scale=a, dynamic_growth_steps=b (a multiplier other than 2 has no "
            "equivalent); a fixed loss scale N has no LossScaleOptimizer on Keras 3: "
            f"{KERAS3_FIXED}."
        ),
    ),
    Rule(
        code="LSO002",
        name="loss-scale-optimizer-isinstance",
        summary="isinstance/issubclass against the experimental class -> the new class",
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction="check against the non-experimental LossScaleOptimizer",
        example=TF_IMPORT
        + "scaled = isinstance(opt, tf.keras.mixed_precision.experimental.LossScaleOptimizer)\n",
        example_after={
            "keras2": TF_IMPORT
            + "scaled = isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)\n",
            "keras3": TF_IMPORT
            + "scaled = isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)\n",
            "shim": SHIM_IMPORT + "scaled = isinstance(opt, compat_lso.LossScaleOptimizer)\n",
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
            "adapt it to LossScaleOptimizer(inner_optimizer, dynamic, initial_scale, ...), or "
            "use --target shim"
        ),
        details=(
            "The new LossScaleOptimizer takes (inner_optimizer, dynamic, initial_scale, "
            "dynamic_growth_steps) instead of (optimizer, loss_scale): adapt the subclass or "
            "factory, or use --target shim (compat_lso.experimental.LossScaleOptimizer keeps the "
            "old signature). Its calls too, by any name; keras3: what it reads Keras 3 lacks."
        ),
        example=TF_IMPORT
        + "class MyOptimizer(tf.keras.mixed_precision.experimental.LossScaleOptimizer):\n"
        + "    pass\n",
        example_after={
            "keras2": None,
            "keras3": None,
            "shim": SHIM_IMPORT
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
        example_after={
            **dict.fromkeys(
                TARGETS,
                "from tensorflow.keras import mixed_precision\n"
                "mixed_precision.set_global_policy('mixed_float16')\n",
            ),
            "shim": SHIM_IMPORT + "from tensorflow.keras import mixed_precision\n\n"
            "compat_lso.install()\nmixed_precision.set_global_policy('mixed_float16')\n",
        },
    ),
    Rule(
        code="LSO005",
        name="global-policy",
        summary="experimental.global_policy -> global_policy",
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction="call mixed_precision.global_policy",
        example=TF_IMPORT + "policy = tf.keras.mixed_precision.experimental.global_policy()\n",
        example_after=dict.fromkeys(
            TARGETS, TF_IMPORT + "policy = tf.keras.mixed_precision.global_policy()\n"
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
        example=TF_IMPORT + "scale = tf.mixed_precision.experimental.FixedLossScale(8)\n",
        example_after={
            "keras2": TF_IMPORT + "scale = tf.compat.v1.mixed_precision.FixedLossScale(8)\n",
            "keras3": TF_IMPORT + "scale = tf.compat.v1.mixed_precision.FixedLossScale(8)\n",
            "shim": SHIM_IMPORT + "scale = compat_lso.experimental.FixedLossScale(8)\n",
        },
        note=(
            "Inside a LossScaleOptimizer call the loss scale is translated away by LSO001 instead."
        ),
    ),
    Rule(
        code="LSO008",
        name="graph-rewrite",
        summary=(
            "enable_mixed_precision_graph_rewrite / disable_mixed_precision_graph_rewrite (TF2 API)"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction=(
            "a tf.compat.v1 optimizer: tf.compat.v1.mixed_precision."
            "enable_mixed_precision_graph_rewrite; a Keras one: --explain LSO008"
        ),
        details=(
            "The graph rewrite is gone from the TF2 API. TF 2.4-2.8's function did one of two "
            "things by the kind of `opt` (tensorflow/python/training/experimental/"
            "mixed_precision.py at v2.8.0). A tf.compat.v1.train optimizer it wrapped in "
            "TensorFlow's TF1 MixedPrecisionLossScaleOptimizer: "
            "tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt, loss_scale) "
            "is that function, and trains to the same numbers on TF 2.15 and TF 2.21 (float16 "
            "overflow included); it refuses a Keras optimizer from TF 2.11 on (ValueError; "
            "TF 2.4-2.10's gave one the Keras meaning below, which the codemod writes for a "
            "call of it given a Keras optimizer the module shows, on every target). A Keras "
            "optimizer it wrapped in Keras's experimental LossScaleOptimizer with that "
            "loss_scale and then turned on grappler's auto_mixed_precision pass (float16 in "
            "GPU graphs only). On keras2 and keras3 the codemod writes the one or the other "
            "where the module shows which kind `opt` is: built here by a tf.compat.v1.train / "
            "TF1 tf.train optimizer or a Keras (or TensorFlow Addons) optimizer, by a class of "
            "this module with such a base, through horovod.tensorflow's DistributedOptimizer "
            "(which keeps the kind) and through every assignment a name may hold. For a Keras "
            "optimizer it inserts "
            'tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True}) '
            "before the statement and writes tf.keras.mixed_precision.LossScaleOptimizer(opt, "
            "...) with the loss_scale translated as LSO001 does (a run-time one on keras2 too); "
            "on keras3 Keras 3's class runs it (LSO022's note), and a fixed scale is reported. "
            "What is no longer refused: a mixed global policy together with the rewrite, which "
            "TF 2.4-2.8 rejected. Where the module does not decide the kind (a parameter, an "
            "attribute, another module's class or function) the choice is made at run time, as "
            "TF 2.4-2.8 made it: the option set before, then `opt = (tf.compat.v1's function(opt,"
            " loss_scale) if isinstance(opt, tf.compat.v1.train.Optimizer) else "
            "LossScaleOptimizer(opt, <LSO001's translation>))`; a call is first bound to a fresh "
            "name (only as the first argument of a call that is its statement's whole value). A "
            "LossScale object bound to a name stays for the TF1 branch (Keras's class reads a "
            "DynamicLossScale's initial_loss_scale and increment_period, as TF 2.8's Keras did); "
            "a scale Keras's class cannot take stays manual (on keras3 a fixed or run-time one). "
            "What TF 2.4-2.8 refused (ValueError) still raises: TensorFlow's TF1 loss scale "
            "optimizer, a Keras LossScaleOptimizer (Keras 2: TypeError; Keras 3's class would "
            "wrap it again, so on keras3 an inserted isinstance check raises ValueError), a "
            "non-optimizer (TypeError, AttributeError on Keras 3); one the module shows to be a "
            "loss scale optimizer is reported. disable_mixed_precision_graph_rewrite becomes "
            "TensorFlow's TF1 function, which turns the pass off. --target shim writes "
            "compat_lso.experimental.enable_mixed_precision_graph_rewrite (and disable_), what "
            "`python -m compat_lso run` gives the old names, for both kinds."
        ),
        example=TF_IMPORT
        + "opt = tf.keras.optimizers.SGD(0.1)\n"
        + "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n",
        example_after={
            "keras2": TF_IMPORT
            + "opt = tf.keras.optimizers.SGD(0.1)\n"
            + 'tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})\n'
            + "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
            "keras3": TF_IMPORT
            + "opt = tf.keras.optimizers.SGD(0.1)\n"
            + 'tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})\n'
            + "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
            "shim": SHIM_IMPORT
            + "import tensorflow as tf\n"
            + "opt = tf.keras.optimizers.SGD(0.1)\n"
            + "opt = compat_lso.experimental.enable_mixed_precision_graph_rewrite(opt)\n",
        },
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
        example=TF_IMPORT
        + "opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, 'dynamic')\n",
        example_after=dict.fromkeys(
            TARGETS,
            TF_IMPORT + "opt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer("
            "opt, 'dynamic')\n",
        ),
    ),
    Rule(
        code="LSO010",
        name="loss-scale-call",
        summary="opt.loss_scale() (the old LossScale object) -> opt.loss_scale",
        action={"keras2": SAFE, "keras3": MANUAL, "shim": SAFE},
        instruction="drop the call: since TF 2.4, opt.loss_scale is the scale itself (a tensor)",
        instructions={
            "keras3": (
                "read tf.convert_to_tensor(opt.dynamic_scale if opt.built else "
                "opt.initial_scale, tf.float32), or use --target shim"
            ),
            "shim": (
                "drop the call (opt.loss_scale, a tensor); compile()'s wrapper is compat_lso's, "
                "which has it, once compat_lso.install() ran"
            ),
        },
        details=(
            "Keras 3 has no loss_scale attribute: read "
            "tf.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, "
            "tf.float32) (dynamic_scale is a variable Keras 3 creates when the optimizer is "
            "built; LSO017 writes the same for opt.loss_scale), or use --target shim."
        ),
        example=TF_IMPORT
        + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\nprint(opt.loss_scale())\n",
        example_after={
            "keras2": TF_IMPORT
            + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\nprint(opt.loss_scale)\n",
            "keras3": None,
            # LSO015 also moves the TF 2.4 constructor to the shim's class.
            "shim": SHIM_IMPORT
            + "opt = compat_lso.LossScaleOptimizer(sgd)\nprint(opt.loss_scale)\n",
        },
        note=(
            "Where `opt` is, in the same scope, last bound to a LossScaleOptimizer call (old, "
            "new, or the shim's), or is known as one by its use (get_scaled_loss is called on "
            "it; `model.optimizer`, or a name bound to it, in a mixed-precision file that makes "
            "a loss scale optimizer). On `x.optimizer` in a mixed-precision file that makes "
            "none (compile()'s wrapper), the call is reported on every target."
        ),
    ),
    Rule(
        code="LSO012",
        name="unknown-experimental-member",
        summary="any other member of a removed experimental mixed-precision namespace",
        action={"keras2": MANUAL, "keras3": MANUAL, "shim": MANUAL},
        instruction=(
            "no known equivalent outside the removed experimental namespace: port it by hand"
        ),
        details=(
            "This member has no known equivalent outside the removed experimental "
            "namespace: port it by hand."
        ),
        example=TF_IMPORT
        + "policy = tf.keras.mixed_precision.experimental.get_layer_policy(layer)\n",
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
        example=SHIM_IMPORT + "opt = compat_lso.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        example_after=dict.fromkeys(
            TARGETS, SHIM_IMPORT + "opt = compat_lso.LossScaleOptimizer(opt)\n"
        ),
        note=(
            "The second step for code that first moved onto the shim's experimental class (its "
            "DeprecationWarning names the same replacement). The loss scale is translated as in "
            "LSO001; one only known at run time is left on the experimental class, which keeps "
            "working, and not reported."
        ),
    ),
)
