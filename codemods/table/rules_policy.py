"""LSO006: TF 2.1-2.8's experimental Policy(name, loss_scale), whose loss scale only compile()
read: what reaches compile() decides whether dropping it changes a number, and what to do where
it does (per value, per target)."""

from __future__ import annotations

from typing import Final

from codemods.table.base import SAFE, SHIM_IMPORT, TARGETS, Rule, Target

# Where the loss scale reaching compile() may be None on a 'mixed_float16' model: no loss
# scaling, as None meant, per target. Keras 2's compile() cannot be told not to wrap; a fixed
# scale of 1 multiplies and divides by 1, exactly, and skips no step (Keras 2.15's
# LossScaleOptimizer applies every step of a fixed scale).
POLICY_NONE_HELP: Final[dict[Target, str]] = {
    "keras2": (
        "drop it; no scaling, as None meant: give compile() LossScaleOptimizer(opt, "
        "dynamic=False, initial_scale=1)"
    ),
    "keras3": "drop it; no scaling, as None meant: pass compile(..., auto_scale_loss=False)",
}
# Where it is only known at run time: each value it may take, as compile() applied it.
POLICY_RUN_TIME_HELP: Final[dict[Target, str]] = {
    "keras2": (
        "drop it; give compile() LossScaleOptimizer(opt, dynamic=False, initial_scale=s) for a "
        "number s, initial_scale=1 for None"
    ),
    "keras3": (
        "drop it; for a number s the inner optimizer's loss_scale_factor=s, and for s or None "
        "compile(..., auto_scale_loss=False)"
    ),
}
# Where every compile() of the module gets a loss scale optimizer: the loss scale was never read.
POLICY_DEAD_HELP: Final = (
    "nothing to do: compile() leaves a loss scale optimizer as it is (TF 2.4-2.8, Keras 2.9+, 3)"
)

POLICY_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO006",
        name="policy",
        summary=(
            "experimental.Policy(name[, loss_scale]) -> Policy(name); loss_scale dropped where "
            "Model.compile does the same without it"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        instruction=(
            "drop loss_scale and give the scale to the optimizer (LossScaleOptimizer(opt, ...)) "
            "before compile"
        ),
        details=(
            "The new Policy takes no loss_scale: drop the argument and give the loss "
            "scale to the optimizer instead, before compile (LossScaleOptimizer(opt, ...); "
            "compile leaves a LossScaleOptimizer as it is); compile wraps the optimizer in the "
            "default dynamic loss scaling under 'mixed_float16' and in nothing otherwise."
        ),
        example=(
            "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
            "policy = mixed_precision.Policy('mixed_float16', loss_scale='dynamic')\n"
            "mixed_precision.set_policy(policy)\n"
        ),
        example_after={
            **dict.fromkeys(
                TARGETS,
                "from tensorflow.keras import mixed_precision\n"
                "policy = mixed_precision.Policy('mixed_float16')\n"
                "mixed_precision.set_global_policy(policy)\n",
            ),
            "shim": SHIM_IMPORT + "from tensorflow.keras import mixed_precision\n\n"
            "compat_lso.install()\npolicy = mixed_precision.Policy('mixed_float16')\n"
            "mixed_precision.set_global_policy(policy)\n",
        },
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
            "(tests/codemods/test_codemod_lso006_policy_compile.py). Whatever it is, it is "
            "dropped, with a note that no number changes, where the module compiles and every "
            "compile() gets a loss scale optimizer made here (followed through names, "
            "attributes and returns): compile() leaves one as it is on every Keras, so it was "
            "never read (a GAN's `Policy('mixed_float16', loss_scale=1024)` beside "
            "`LossScaleOptimizer(opt, 'dynamic')` trained at 2**15; "
            "tests/codemods/test_codemod_semantics.py trains both). Only the wrapper's class "
            "differs on TF 2.4-2.8 (the experimental subclass before, the new class after; LSO002 "
            "rewrites isinstance checks to the new class, which accepts both). Any other "
            "loss_scale (a number, another LossScale, 'dynamic' on another policy, None on "
            "'mixed_float16', a value or a policy name only known at run time) is reported on "
            "keras2 and keras3, the help by what reaches compile(): a number was a fixed scale; "
            "None, a parameter's default included, was none, which the new 'mixed_float16' "
            "Policy's compile() replaces by dynamic scaling (Keras 2 spells none as "
            "LossScaleOptimizer(opt, dynamic=False, initial_scale=1), exact; Keras 3 as "
            "compile(..., auto_scale_loss=False)); on shim it goes to "
            "compat_lso.experimental.Policy, which keeps it "
            "and applies it in compile once compat_lso.install() has run, and the shim target adds "
            "that call after the module's imports (what `python -m compat_lso run` does; without "
            "it, Keras wraps a 'mixed_float16' model in its own dynamic loss scaling). Where the "
            "dropped loss_scale's model may be 'mixed_float16', keras3 notes at the line that "
            "Keras 3's compile() wraps in its own class, whose dynamic rule differs (LSO022), and "
            "shim adds compat_lso.install(), after which compile() wraps as TF 2.15 did."
        ),
    ),
)
