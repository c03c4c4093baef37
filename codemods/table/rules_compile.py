"""LSO023: the loss scale optimizer compile() adds under mixed_float16, made compat_lso's (shim):
passed to compile() where exact, else through compat_lso.install() at start-up."""

from __future__ import annotations

from typing import Final

from codemods.table.base import SAFE, SHIM_IMPORT, TF_IMPORT, Rule

# What TF 2.4-2.15 code reads or calls on compile()'s wrapper (`self.optimizer`,
# `self.model.optimizer`, `model.optimizer`) that Keras 3's own class lacks; compat_lso's has all.
COMPILE_SURFACE: Final[frozenset[str]] = frozenset(
    {
        "get_scaled_loss",
        "get_unscaled_gradients",
        "loss_scale",
        "dynamic",
        "dynamic_counter",
        "initial_scale",
        "dynamic_growth_steps",
        "lr",
        "_optimizer",
    }
)
# The policy setters whose 'mixed_float16' makes compile() wrap (tf_keras keeps Keras 2's class).
POLICY_SETTERS: Final[frozenset[str]] = frozenset(
    f"{keras}.mixed_precision.{name}"
    for keras in ("tensorflow.keras", "tensorflow.compat.v2.keras", "keras")
    for name in ("set_global_policy", "experimental.set_policy")
)
# compile("adam") names Keras knows in Keras 2.15 and Keras 3 alike (optimizers.get lowercases).
OPTIMIZER_NAMES: Final[frozenset[str]] = frozenset(
    {"sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "ftrl"}
)
# The modules whose classes are plain optimizers, as compile() would get them.
OPTIMIZER_MODULES: Final[tuple[str, ...]] = (
    "tensorflow.keras.optimizers.",
    "tensorflow.compat.v2.keras.optimizers.",
    "keras.optimizers.",
)

_BEFORE = (
    TF_IMPORT + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
    "model = build()\n"
    "model.compile(optimizer='adam', loss='mse')\n"
    "print(model.optimizer.loss_scale)\n"
)

COMPILE_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO023",
        name="compile-loss-scale-optimizer",
        summary=(
            "the optimizer compile() wraps under mixed_float16: Keras 3's class lacks TF 2.4's "
            "surface (get_scaled_loss, loss_scale, ...) and does not count skipped steps"
        ),
        action={"keras2": "none", "keras3": "none", "shim": SAFE},
        instruction=(
            "pass compat_lso.LossScaleOptimizer(optimizer) to compile(), or call "
            "compat_lso.install() at start-up"
        ),
        example=_BEFORE,
        example_after={
            "keras2": _BEFORE,
            # LSO017: compile()'s wrapper is Keras 3's class, and its scale is read as one.
            "keras3": _BEFORE.replace(
                "model.optimizer.loss_scale",
                "tf.convert_to_tensor(model.optimizer.dynamic_scale if model.optimizer.built "
                "else model.optimizer.initial_scale, tf.float32)",
            ),
            "shim": SHIM_IMPORT
            + _BEFORE.replace(
                "optimizer='adam'",
                "optimizer=compat_lso.LossScaleOptimizer(tf.keras.optimizers.get('adam'))",
            ),
        },
        note=(
            "Under the 'mixed_float16' policy compile() wraps a plain optimizer in a loss scale "
            "optimizer: Keras 2's TF 2.4 class on TF 2.4-2.15, Keras 3's own class on TF 2.16+, "
            "which has no get_scaled_loss, get_unscaled_gradients, loss_scale, dynamic, "
            "dynamic_counter, lr or _optimizer, whose apply_gradients divides the gradients "
            "by the loss scale, and which does not count a skipped step in `iterations` (which "
            "learning-rate schedules and Adam's bias correction read; Keras 3.0-3.8's wrapper "
            "kept an `iterations` of its own at 0), so the same code trains to other numbers "
            "with nothing read. shim: in a file that sets a policy that may be 'mixed_float16' "
            "and makes no loss scale optimizer itself, compile()'s optimizer is passed as "
            "`compat_lso.LossScaleOptimizer(optimizer)` where that is exact: compile() keeps a "
            "loss scale optimizer it is given (Keras 2 and Keras 3 alike), so TF 2.15's class "
            "and numbers stay. Exact means: a `set_global_policy('mixed_float16')` (or "
            "`set_policy`, or `Policy('mixed_float16')`) statement directly in the body of the "
            "module or of the function that compiles, before the compile() call with no other "
            "policy set in between; `model.compile(...)` on a name bound after that statement "
            "(not restored by load_model and the like, which keep the saved policy), in a file "
            "that overrides no compile(), without Keras 3's auto_scale_loss; its optimizer a "
            "Keras optimizer class called, a name last bound to one, a name Keras knows "
            "(`'adam'` -> `tf.keras.optimizers.get('adam')`, what compile() does with it) or "
            "none (compile()'s default, 'rmsprop'). Any other compile() under that policy, or a "
            "policy set where no compile() is in the file (it runs elsewhere), gets "
            "`compat_lso.install()` added after the module's imports: what `python -m compat_lso "
            "run` does, after which compile() wraps a 'mixed_float16' model's optimizer in "
            "compat_lso's class at run time. A module that calls compat_lso.install() itself is "
            "left alone. keras2: nothing here. keras3: a note (LSO022) at each such compile(), "
            "or at the policy where the file compiles nothing; LSO011, LSO017 and LSO019 "
            "rewrite or report the reads."
        ),
        partly=frozenset({"shim"}),
    ),
)
