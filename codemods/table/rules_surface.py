"""LSO019: Keras 2's optimizer forms used on a loss scale optimizer, which Keras 3 lacks; LSO024:
Keras 2's legacy optimizers in mixed-precision code, which Keras 3 cannot build."""

from __future__ import annotations

from typing import Final

from codemods.table.base import MANUAL, SAFE, SHIM_IMPORT, SHIM_LSO, TF_IMPORT, Rule, Target

# Keras 2 forms Keras 3 renamed: old attribute -> Keras 3's attribute, the same object.
SURFACE_RENAMED: Final[dict[str, str]] = {"lr": "learning_rate", "_optimizer": "inner_optimizer"}
# Keras 2 forms with no Keras 3 equivalent on the loss scale optimizer (the shim refuses them
# too, on Keras 3, but for SURFACE_KEPT_BY_SHIM), and the one-line fix. TF 2.15's default
# optimizer had none of them either.
SURFACE_REFUSED: Final[dict[str, str]] = {
    "weights": "use opt.variables (Keras 3's list) or opt.inner_optimizer.variables",
    "get_weights": (
        "[v.numpy() for v in opt.inner_optimizer.variables] is in Keras 3's order (per variable), "
        "with the learning rate"
    ),
    "get_slot": (
        "Keras 3 keeps slots in opt.inner_optimizer.variables, named after the variable and its "
        "own slot name"
    ),
    "get_slot_names": "read the slot variables' names from opt.inner_optimizer.variables",
    "add_slot": (
        "create the variable in the inner optimizer's build() (add_variable_from_reference)"
    ),
    "_decayed_lr": (
        "on Keras 3 write tf.cast(opt.learning_rate, dtype), the schedule's current value (a "
        "Keras 2 legacy optimizer's learning_rate is the schedule itself)"
    ),
    # Keras 2's wrapper: the inner optimizer's tf.gradients of the scaled loss, unscaled. keras3
    # scales back at an apply_gradients that gets them (LSO021: applied as given, as by Keras 2),
    # so the help asks for the same unscaled values, never the scaled ones.
    "get_gradients": (
        "take them with a tf.GradientTape of opt.scale_loss(loss), each times 1 / "
        "opt.scale_loss(1.0): unscaled, as Keras 2's were"
    ),
}
# Of those, the ones compat_lso's class has on Keras 3, with TF 2.4-2.10's meaning: kept on the
# shim target where the receiver is the loss scale optimizer itself (not its inner optimizer).
SURFACE_KEPT_BY_SHIM: Final[frozenset[str]] = frozenset({"get_gradients"})
# Keras 2 forms Keras 3 has with another meaning: what changed, and the one-line fix. Keras 2's
# set_weights set the inner optimizer's state; compat_lso's refuses a Keras 2 list.
SURFACE_CHANGED: Final[dict[str, tuple[str, str]]] = {
    "set_weights": (
        "Keras 3's sets the wrapper's own variables, Keras 2's the inner optimizer's",
        "opt.inner_optimizer.set_weights(values), with values in Keras 3's order and its "
        "learning rate",
    ),
}
# What a subclass of Keras 2's loss scale optimizer (or of the experimental one) may read of its
# base that Keras 3's LossScaleOptimizer lacks (LSO003/LSO016 on keras3 name them): the member ->
# Keras 3's name for the same thing, or "" where it has none. Keras 2's private `_optimizer` is
# the inner optimizer real trainers read; `_loss_scale`, its loss scale state object.
KERAS2_ONLY_MEMBERS: Final[dict[str, str]] = {
    **SURFACE_RENAMED,
    **dict.fromkeys(SURFACE_REFUSED, ""),
    "_loss_scale": "",
    "loss_scale": "dynamic_scale",
    "dynamic_counter": "step_counter",
    "dynamic": "",
    "get_scaled_loss": "scale_loss",
    "get_unscaled_gradients": "",
}
# An assignment to `iterations`, which Keras 3 optimizers own: the fix.
SURFACE_ITERATIONS: Final = (
    "read opt.iterations instead (tf.summary.experimental.set_step(opt.iterations)), or set it "
    "with opt.iterations.assign(n)"
)

_LSO019_BEFORE = (
    TF_IMPORT
    + "import horovod.tensorflow as hvd\n"
    + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
    + "hvd.broadcast_variables(opt.variables(), root_rank=0)\n"
)

# LSO024: Keras 2's legacy optimizers (TF 2.11-2.15 code kept on them for checkpoints or
# Horovod), which Keras 3's `keras.optimizers.legacy` refuses to build (ImportError).
LEGACY_OPTIMIZERS: Final[tuple[str, ...]] = (
    "tensorflow.keras.optimizers.legacy.",
    "keras.optimizers.legacy.",
)
LEGACY_OPTIMIZER_TARGETS: Final[frozenset[Target]] = frozenset({"keras3", "shim"})
_LSO024_BEFORE = (
    TF_IMPORT + "opt = tf.keras.mixed_precision.LossScaleOptimizer(\n"
    "    tf.keras.optimizers.legacy.Adam(1e-3))\n"
)

SURFACE_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO019",
        name="keras2-optimizer-surface",
        summary=(
            "Keras 2 optimizer forms on a loss scale optimizer (opt.variables(), opt.lr, "
            "opt._optimizer, opt.weights, opt.get_slot(), opt.set_weights(), opt.iterations = v, "
            "...)"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": MANUAL},
        instruction=(
            "use Keras 3's optimizer API instead (--explain LSO019 maps each name), or --target "
            "shim"
        ),
        details=(
            "Keras 3's optimizers have none of TF 2.4's weights, get_weights, get_slot, "
            "get_slot_names, add_slot or _decayed_lr, and own their iterations: rewrite the line "
            "as each finding's help says. keras3 rewrites `opt._decayed_lr(dtype)` (the rate of "
            "the step: a schedule evaluated at iterations) as `tf.cast(opt.learning_rate, "
            "dtype)`, Keras 3's learning_rate being that value; Keras 2 also divided it by "
            "(1 + decay * step) for an optimizer built with `decay`, which Keras 3 optimizers "
            "ignore (with a warning), so the value logged is then the one Keras 3 applies. "
            "shim reports it: its code also runs on Keras 2, where a legacy optimizer's "
            "learning_rate is the schedule itself. No other is rewritten because no Keras 3 "
            "form has the same meaning (TF 2.15's Keras 2 class over a legacy optimizer against "
            "TF 2.21's Keras 3 class, Adam over two variables and a float16 overflow): Keras 2's "
            "get_weights() (and set_weights' list) is [iterations, every variable's first slot, "
            "then every variable's second slot], its iterations counting skipped steps; Keras "
            "3's inner_optimizer.variables is [iteration, learning_rate, each variable's slots "
            "together], skipped steps not counted (LSO022), its slots created before the first "
            "step. Slot names are the optimizer class's own and differ (Adam's m and v are "
            "Keras 3's momentum and velocity), and the call does not say which class it is."
        ),
        example=_LSO019_BEFORE,
        example_after={
            "keras2": _LSO019_BEFORE,
            "keras3": _LSO019_BEFORE.replace("opt.variables()", "opt.variables"),
            # LSO015 moves the constructor; compat_lso's class keeps `variables()` callable.
            # (the `tensorflow` import, used by nothing else, becomes compat_lso's).
            "shim": SHIM_IMPORT
            + _LSO019_BEFORE.removeprefix(TF_IMPORT).replace(
                "tf.keras.mixed_precision.LossScaleOptimizer", SHIM_LSO
            ),
        },
        note=(
            "Receivers: a name last bound (same scope) to a LossScaleOptimizer call, and, in a "
            "file that says mixed_float16 or LossScaleOptimizer, `x.optimizer` "
            "(`model.optimizer`, `self.model.optimizer`) or a name bound to it (compile() wraps "
            "the optimizer under mixed_float16). keras3: `opt.variables()` -> `opt.variables` "
            "(Keras 3's list; it also holds the wrapper's own variables and the loss scale "
            "state, where Keras 2's held the inner optimizer's only: that list is "
            "`opt.inner_optimizer.variables` less the learning rate variable Keras 3 lists for a "
            "constant rate), `opt.lr` -> `opt.learning_rate` (read or "
            "assigned), `opt._optimizer` -> `opt.inner_optimizer`, `K.set_value(opt.lr, v)` (or "
            "on `opt.learning_rate`) -> `opt.learning_rate.assign(v)` (Keras 3's legacy "
            "set_value raises on a Keras 3 variable, whose dtype is a str); `opt.weights`, "
            "`get_weights()`, `get_slot()`, `get_slot_names()`, `add_slot()`, `_decayed_lr()` "
            "(also on `opt._optimizer`/`opt.inner_optimizer`; called with a dtype on a name or "
            "attribute chain, keras3 rewrites it), `opt.set_weights(values)` "
            "(Keras 3's sets the wrapper's own variables, Keras 2's the inner optimizer's) and "
            "`opt.iterations = v` are reported, each with its fix. shim: compat_lso's class "
            "keeps `variables()`, `lr` (the tf.Variable set_value handles), `_optimizer` and "
            "`get_gradients()` (TF 2.4-2.10's meaning, in a tf.function; reported on "
            "`opt._optimizer`); the forms it refuses on Keras 3 are reported, "
            "`K.set_value(opt.learning_rate, v)` too (fix: `opt.learning_rate.assign(v)`), and "
            "so are those four on `model.optimizer` "
            "in a file that makes no loss scale optimizer (compile()'s wrapper is Keras 3's own "
            "class there unless compat_lso.install() ran, as under `python -m compat_lso run`), "
            "as are TF 2.4's `loss_scale`, `dynamic` and `dynamic_counter` read there (Keras "
            "3's class has none of them; fix: compat_lso.install() at start-up, or pass "
            "compat_lso.LossScaleOptimizer(...) to compile()); where the file sets a policy "
            "that may be 'mixed_float16', LSO023 does one or the other and none of these is "
            "reported. keras2: nothing to do."
        ),
        partly=frozenset({"keras3"}),
    ),
    Rule(
        code="LSO024",
        name="legacy-optimizer",
        summary=(
            "a Keras 2 legacy optimizer (tf.keras.optimizers.legacy.Adam, ...) in "
            "mixed-precision code: Keras 3 cannot build one"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": SAFE},
        partly=frozenset({"keras3", "shim"}),
        instruction=(
            "use tf.keras.optimizers.<same name> (last bits may differ), or tf_keras with "
            "TF_USE_LEGACY_KERAS=1"
        ),
        details=(
            "Keras 3's keras.optimizers.legacy has Adagrad, Adam, Ftrl, RMSprop and SGD only to "
            "raise ImportError when one is built (and no Adadelta, Adamax or Nadam). A call "
            "becomes Keras 3's optimizer of the same name where that is the same update rule "
            "and the call's arguments mean the same there (`lr=` is renamed learning_rate), "
            "with a note at the line. Measured on TF 2.15 (Keras 2's loss scale optimizer over "
            "the legacy class) against TF 2.21 (compat_lso's over Keras 3's class), twelve "
            "steps whose first six overflow float16: losses, scales and iterations equal; the "
            "weights bit for bit for SGD (momentum, nesterov), Adagrad, Adadelta, Adamax and "
            "Ftrl, in the last bits for Adam (amsgrad too) and RMSprop with momentum (TF 2.15 "
            "computes them in fused kernels). Reported instead, with tf_keras "
            "(TF_USE_LEGACY_KERAS=1) as the fix, where no Keras 3 class has TF 2.15's rule: "
            "Nadam (Keras 3's momentum schedule is 0.96**step, TF 2.15's 0.96**(0.004*step)), "
            "RMSprop without momentum (TF 2.15 adds epsilon outside the square root, Keras 3 "
            "inside), Adagrad where that placement moves more than the last bits (epsilon / "
            "sqrt(initial_accumulator_value) over 2**-20, or not written as numbers). Also "
            "reported: `decay=` (Keras 3 ignores it; InverseTimeDecay(lr, 1, decay) is TF "
            "2.15's), `epsilon=None` or 0 (TF 2.15 used the backend's 1e-7), positional "
            "arguments that sit elsewhere in Keras 3's signature, *args or **kwargs, and a "
            "legacy class used other than by calling it. `python -m compat_lso run` builds the "
            "same Keras 3 classes for the legacy names (a warning at the line) and refuses the "
            "same cases."
        ),
        example=_LSO024_BEFORE,
        example_after={
            "keras2": _LSO024_BEFORE,
            "keras3": _LSO024_BEFORE.replace(".legacy.", "."),
            # LSO015 moves the constructor.
            "shim": SHIM_IMPORT
            + _LSO024_BEFORE.replace(
                "tf.keras.mixed_precision.LossScaleOptimizer", SHIM_LSO
            ).replace(".legacy.", "."),
        },
        note=(
            "On keras3 and shim, in modules that use mixed precision (mixed_precision, "
            "mixed_float16, mixed_bfloat16 or LossScaleOptimizer in the text): a call of "
            "tf.keras.optimizers.legacy.X (or keras's) is rewritten where Keras 3's X has the "
            "same rule for its arguments, each other reference reported. keras2: nothing to do "
            "(TF 2.11-2.15 have them)."
        ),
    ),
)
