"""The Keras 2 optimizer forms the runtime audit names (`keras2-form` records), one line each.

Recorded at the user's own line (only there: Keras reads and writes some of these names itself):

- forms Keras 3's `LossScaleOptimizer` lacks, which raise there: `get_scaled_loss`,
  `get_unscaled_gradients`, `loss_scale`, `dynamic_counter`, `minimize`, `get_gradients` (TF
  2.4-2.10's, in a tf.function), `variables()` (Keras 3's
  `variables` is a list, of the wrapper's own variables and then the inner optimizer's; Keras 2's
  `variables()` gave the inner optimizer's step counter and slots only). The message: "Keras
  3's ... has no ...".
- forms Keras 3's class takes with another meaning, without raising (`FACTS`):
  `opt.lr = x` (Keras 3 has no `lr`: the assignment makes an attribute nothing reads; reading
  `lr` raises, and is recorded too); `clipnorm`, `global_clipnorm`, `clipvalue` (which Keras 2's
  wrapper of an `OptimizerV2` delegated to the inner optimizer) and `use_ema`, `ema_momentum`
  (which TF 2.11-2.15's wrapper of a new optimizer delegated), read or written: Keras 3's
  wrapper has its own, which it never applies; `set_weights()` (Keras 2's wrapper of an
  `OptimizerV2` set the inner optimizer's state, Keras 3's sets its own variables: step counter,
  learning rate, loss scale); assigning one of the hyperparameters `OptimizerV2` keeps in
  `_hyper` (`opt.momentum = 0.5`, `HYPERPARAMETERS`) that the inner optimizer has, which Keras
  2's wrapper set on the inner optimizer, as the shim does, and Keras 3's class keeps on the
  wrapper (`decay`, which no Keras 3 optimizer has, and a name the inner optimizer lacks stay on
  the wrapper in this run too: not recorded).

Not recorded: `weights`, `get_weights()`, `get_slot()` and the rest of `OptimizerV2`'s surface
that Keras 3's class lacks raise AttributeError there and in the shim, so a run that uses them
stops at the line. Reading `opt.variables` as a list (TF 2.11-2.15) gives Keras 3's list in this
run too; it cannot be told from Keras 3 code reading it.

Each subject maps to its fix (`KERAS2_FORMS`); a subject written `name=` is an assignment.
"""

from __future__ import annotations

# The hyperparameters Keras 2's OptimizerV2 subclasses keep in `_hyper` (TF 2.15's
# keras/src/optimizers/legacy/*.py), which its LossScaleOptimizer's __setattr__ set on the inner
# optimizer. `learning_rate` is a property on Keras 3's wrapper too (delegated), so not here.
HYPERPARAMETERS = (
    "decay",
    "momentum",
    "rho",
    "beta_1",
    "beta_2",
    "beta",
    "learning_rate_power",
    "l1_regularization_strength",
    "l2_regularization_strength",
)

# Settings Keras 2's wrappers read and wrote on the inner optimizer; Keras 3's keeps its own.
DELEGATED = ("clipnorm", "global_clipnorm", "clipvalue", "use_ema", "ema_momentum")

# Forms Keras 3's class accepts with another meaning: subject -> the fact (one line).
FACTS = {
    "lr": (
        "Keras 3's LossScaleOptimizer has no `lr`: reading it raises, and `opt.lr = x` sets an "
        "attribute nothing reads (the learning rate stays)"
    ),
    **{
        name: (
            f"Keras 3's LossScaleOptimizer keeps its own `{name}`, which it never applies "
            "(Keras 2's wrapper delegated it to the inner optimizer)"
        )
        for name in DELEGATED
    },
    "set_weights()": (
        "Keras 3's set_weights sets the wrapper's own variables (step counter, learning rate, "
        "loss scale); Keras 2's set the inner optimizer's"
    ),
    **{
        f"{name}=": (
            f"Keras 2's wrapper set the inner optimizer's `{name}`, as this run does; Keras 3's "
            "class keeps the value on the wrapper, where nothing reads it"
        )
        for name in HYPERPARAMETERS
    },
}

# Keras 2 forms -> the Keras 3 spelling (the fix).
KERAS2_FORMS = {
    "get_scaled_loss": "use opt.scale_loss(loss) (then apply_gradients divides)",
    "get_unscaled_gradients": "drop it: Keras 3's apply_gradients divides the scaled gradients",
    "loss_scale": "read opt.dynamic_scale (a variable)",
    "dynamic_counter": "read opt.step_counter (a variable)",
    "minimize": "use a GradientTape, opt.scale_loss and opt.apply_gradients",
    "get_gradients": (
        "take the gradients of opt.scale_loss(loss) with a tf.GradientTape (Keras 3's "
        "apply_gradients divides them)"
    ),
    "variables()": (
        "read opt.inner_optimizer.variables (Keras 2's list, and a constant learning rate's "
        "variable; Keras 3's opt.variables, a list, also holds the wrapper's and the loss scale's)"
    ),
    "lr": "use opt.learning_rate",
    **{name: f"use opt.inner_optimizer.{name}" for name in DELEGATED},
    "set_weights()": "call opt.inner_optimizer.set_weights(values)",
    **{f"{name}=": f"set opt.inner_optimizer.{name}" for name in HYPERPARAMETERS},
}
