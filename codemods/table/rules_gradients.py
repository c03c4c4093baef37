"""The rules on what reaches a loss scale optimizer's apply_gradients (LSO020-LSO022): Keras 2's
applies the gradients as given, Keras 3's divides them by the loss scale first. One module each
under codemods/rules/; the analysis is codemods/meaning/gradients.py."""

from __future__ import annotations

from typing import Final

from codemods.table.base import (
    KERAS3_RULE_HELP,
    NOTE,
    SAFE,
    SHIM_IMPORT,
    SHIM_LSO,
    TF_IMPORT,
    Rule,
)

_LSO = "tf.keras.mixed_precision.LossScaleOptimizer"
_WRAP_ONLY = (
    TF_IMPORT + f"opt = {_LSO}(tf.keras.optimizers.SGD())\n\n\n"
    "def train_step(model, x):\n"
    "    with tf.GradientTape() as tape:\n"
    "        loss = tf.reduce_mean(model(x))\n"
    "    grads = tape.gradient(loss, model.trainable_variables)\n"
    "    opt.apply_gradients(zip(grads, model.trainable_variables))\n"
)
_UNPROVEN = (
    TF_IMPORT + "from trainer import compute_gradients\n\n"
    f"opt = {_LSO}(tf.keras.optimizers.SGD())\n"
    "grads = compute_gradients(model, x)\n"
    "opt.apply_gradients(zip(grads, model.trainable_variables))\n"
)
_BEHAVIOUR = TF_IMPORT + f"opt = {_LSO}(tf.keras.optimizers.SGD(), dynamic_growth_steps=500)\n"

# What changes once Keras 3's class runs TF 2.4-2.15 code: said once, by LSO022's note.
KERAS3_RULE = (
    "Keras 3's dynamic loss scale has no floor at 1 (it keeps halving on overflow), doubles "
    "without checking that the doubled scale is finite, and a skipped step does not advance "
    "`iterations`; TF 2.4-2.15 (and compat_lso) stop halving at 1, double only to a finite scale "
    "and count every step. Whatever reads `iterations` then runs behind by the skipped steps: "
    "the bias correction of Adam, AdamW, Adamax and Nadam (after 8 overflowing first steps the "
    "first applied one uses t=1 where TF 2.15 used t=9: another update, so the weights and the "
    "losses differ from the next step on), learning-rate schedules, and callbacks or code keyed "
    "on the step; with no skipped step nothing differs"
)

GRADIENT_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO020",
        name="unscaled-loss-gradients",
        summary=(
            "apply_gradients on a loss scale optimizer given gradients of an unscaled loss "
            "(a 'wrap-only' loop), which Keras 3 divides by the loss scale"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": NOTE},
        instruction=(
            "take the gradients of opt.scale_loss(loss) inside the tape, or use --target shim"
        ),
        details=(
            "Take the gradients of opt.scale_loss(loss) inside the tape, so that Keras "
            "3's division cancels the scaling, or use --target shim."
        ),
        instructions={
            "shim": (
                "nothing to do: compat_lso's class applies the gradients as given, as Keras 2's"
            ),
        },
        example=_WRAP_ONLY,
        example_after={
            "keras2": _WRAP_ONLY,
            "keras3": _WRAP_ONLY.replace(
                "        loss = tf.reduce_mean(model(x))\n",
                "        loss = tf.reduce_mean(model(x))\n"
                "        scaled_loss = opt.scale_loss(loss)\n",
            ).replace("tape.gradient(loss,", "tape.gradient(scaled_loss,"),
            "shim": SHIM_IMPORT + _WRAP_ONLY.replace(_LSO, SHIM_LSO),
        },
        note=(
            "Keras 2's LossScaleOptimizer.apply_gradients applies the gradients it is given as "
            "they are (it checks them for inf/nan and updates the scale); Keras 3's divides "
            "them by the loss scale first, since Keras 3 code takes them of "
            "opt.scale_loss(loss). A loop that wraps the optimizer but never scales the loss "
            "(plain tape, hvd.DistributedGradientTape, a tf.function returning gradients, "
            "clipping in between) trains on Keras 2 and trains at gradients / 32768 on Keras 3, "
            "without an error. codemods/meaning/gradients.py follows the gradients each "
            "apply_gradients on a loss scale optimizer gets (one built in the file, or "
            "self.optimizer, model.optimizer, a parameter in a file that builds one) back "
            "through names, tuple unpacking, zip, list comprehensions, clipping and all-reduce "
            "calls, "
            "accumulation, functions of the file (returns, strategy.run, tf.function) and "
            "their callers, to each <tape>.gradient(loss, ...), and the loss to a "
            "get_scaled_loss/scale_loss call or to none. keras3: where the gradients of one "
            "tape.gradient reach apply_gradients through names and zip only, and the loss is "
            "a name assigned directly in that tape's `with` block (or the gradient is taken "
            "inside it), the loss is scaled in the tape (`scaled_loss = opt.scale_loss(loss)`) "
            "and its gradients taken instead: Keras 3's division then cancels the scaling "
            "(exact for power-of-two scales, unless the scaled gradients overflow, when Keras 3 "
            "skips the step and lowers the scale as for any scaled loss). Anything else "
            "(clipping or an all-reduce in between, which would see scaled gradients; the "
            "gradients returned by another function) is reported at the apply_gradients line. "
            "shim: a note, nothing changes (compat_lso keeps Keras 2's apply_gradients). "
            "keras2: nothing to do."
        ),
        partly=frozenset({"keras3"}),
    ),
    Rule(
        code="LSO021",
        name="unproven-gradient-scaling",
        summary=(
            "apply_gradients on a loss scale optimizer given gradients the codemod cannot "
            "follow to a scaled or an unscaled loss"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": "none"},
        instruction=(
            "pass only the pairs, each gradient times opt.scale_loss(1.0): Keras 3 divides by "
            "it, Keras 2 applied them as given"
        ),
        example=_UNPROVEN,
        example_after={
            "keras2": _UNPROVEN,
            "keras3": _UNPROVEN.replace(
                "zip(grads,",
                "zip([None if grad is None else tf.math.scalar_mul(tf.cast(opt.scale_loss(1.0), "
                "grad.dtype), grad) for grad in grads],",
            ),
            "shim": SHIM_IMPORT + _UNPROVEN.replace(_LSO, SHIM_LSO),
        },
        note=(
            "keras3: Keras 2's apply_gradients applied the gradients as given, whatever they "
            "are; Keras 3's divides them by its scale first. So each gradient is scaled back at "
            "the call, times opt.scale_loss(1.0) (the scale that same step divides by: "
            "initial_scale before the optimizer is built, then dynamic_scale; on a plain Keras 3 "
            "optimizer 1.0 or its loss_scale_factor, which its apply_gradients divides by too), "
            "exact for a power-of-two scale (a note where the file gives a scale that may not be "
            "one) unless a gradient times the scale overflows its dtype (float16 gradients, of "
            "float16 variables: Keras 3 then skips a step TF 2.15 took; mixed_float16's "
            "variables are float32), without knowing where the gradients come from; "
            "tests/old_code/scripts/tf24/unknown_gradients.py shows TF 2.15's numbers kept, "
            "overflow and a tf.function traced before the first step included; finiteness "
            "checks and the "
            "scale update see what TF 2.15's did (LSO022's note says how Keras 3's rule differs). "
            "The scale-back is traced with the apply_gradients that builds the optimizer, so a "
            "tf.function keeps no initial_scale there. If the code later makes these gradients "
            "still-scaled ones (LSO011's fix), the scale-back must go (a note says so where "
            "LSO011 left that optimizer's get_scaled_loss/get_unscaled_gradients manual). "
            "Reported instead, stating what the analysis saw (LSO020's note says what it "
            "follows): a receiver with a call in it (it would run twice), an apply_gradients "
            "given more than its pairs (Keras 3's takes no name, experimental_aggregate_gradients "
            "or second argument), a receiver only named like an optimizer in a file that builds "
            "a tf.compat.v1, TensorFlow Addons or tf_keras optimizer (no scale_loss). shim and "
            "keras2: nothing to do, their apply_gradients keeps Keras 2's meaning."
        ),
        partly=frozenset({"keras3"}),
    ),
    Rule(
        code="LSO022",
        name="keras3-loss-scale-rule",
        summary=(
            "a TF 2.4-2.15 (or experimental) loss scale optimizer that runs on Keras 3's class "
            "after --target keras3, whose dynamic rule differs by design"
        ),
        action={"keras2": "none", "keras3": NOTE, "shim": "none"},
        instruction=KERAS3_RULE_HELP,
        details=(
            f"{KERAS3_RULE}. Where that matters (an Adam-family optimizer, a schedule or a "
            "callback on a run that overflows), use --target shim, which keeps TF 2.4's rule."
        ),
        example=_BEHAVIOUR,
        example_after={
            "keras2": _BEHAVIOUR,
            "keras3": _BEHAVIOUR,
            "shim": SHIM_IMPORT + _BEHAVIOUR.replace(_LSO, SHIM_LSO),
        },
        note=(
            f"keras3: a note at each loss scale optimizer the file builds with the old API: "
            f"{KERAS3_RULE}. The findings of LSO001, LSO011 and LSO015-LSO017 point here "
            "instead of repeating it. Reported instead (manual): apply_gradients through a loss "
            "scale optimizer made in the file, in a step a tf.distribute strategy runs per "
            "replica (`strategy.run(step_fn)`, TF official models' loop): with several replicas "
            "Keras 3's class fails in the first step (keras-team/keras#19246, #18666) and, built "
            "beforehand, applies a step whose non-finite gradients are on one replica only; "
            "--target shim runs it as TF 2.15 did."
        ),
    ),
)
