"""Keras 3 only: the Keras 2 optimizer forms that old training code uses on a loss scale optimizer.

What TF 2.15's `LossScaleOptimizer` (Keras 2.15's `LossScaleOptimizerV3`, which wraps TF 2.15's
default `tf.keras.optimizers.*`) offers and Keras 3's class lacks or spells differently:

- `opt.variables()`: Keras 2 made `variables` a method, Keras 3 a list; Horovod's
  `hvd.broadcast_variables(opt.variables(), root_rank=0)` is the common caller. Here `variables`
  is Keras 3's list (`len(opt.variables)`, iteration and Keras's own saving keep working) and
  calling it gives Keras 2's answer: the inner optimizer's step counter and slots, in its order,
  without the loss scale state (Keras 2.15 returned `self._optimizer.variables`) and without the
  variable that holds a constant learning rate, which Keras 3 lists after the step counter and
  Keras 2 never listed (TF 2.15's default optimizer: `[iteration, m/a, v/a, ...]`).
- `opt.lr`: Keras 2's alias of `learning_rate`, read and written (`K.set_value(opt.lr, x)`
  callbacks). Keras 3 has only `learning_rate`, which the wrapper delegates to the inner
  optimizer, as Keras 2 did. Read, `lr` is what Keras 2's was: the tf.Variable that holds the
  rate (the one backing Keras 3's variable), which `tf.keras.backend.set_value`/`get_value`
  handle; Keras 3's legacy set_value reads `x.dtype.name`, which a Keras 3 variable lacks.
- `opt._optimizer`: Keras 2's private name for the inner optimizer, read by real trainers.
- `opt.iterations = variable`: Keras 2.15 let it replace the step counter before the first step;
  Keras 3 optimizers own theirs. Refused with an error that says what to write instead.
- Forms of the TF 2.4-2.10 `OptimizerV2` that TF 2.15's default optimizer no longer had either
  (`weights`, `get_weights()`, `get_slot()`, `get_slot_names()`, `add_slot()`, `_decayed_lr()`):
  refused as AttributeError, as on TF 2.15, but naming Keras 3's spelling.

- `opt.momentum = x` and OptimizerV2's other hyperparameters (`_audit_forms.HYPERPARAMETERS`): TF
  2.4-2.10's wrapper (TF 2.15's over a legacy optimizer) read and set them on the inner optimizer;
  TF 2.11-2.15's wrapper of the new optimizer, like Keras 3's class, kept an assignment on the
  wrapper, where nothing reads it. Here they are read from and set on the inner optimizer when it
  has that name (a name it lacks stays on the wrapper, as in Keras 2). Keras 3 optimizers read them
  as Python numbers when a step is traced (OptimizerV2 read variables): set after this optimizer's
  step was traced in a tf.function (`Model.fit`'s too), the new value reaches later traces only, and
  a warning says so; so does setting one of the settings in `DELEGATED` then (`clipnorm`, ...: Keras
  2 read those at trace time too). Keras 2's SGD and RMSprop applied momentum only if constructed
  with one, Keras 3's if built with one: momentum set on one made without, before its first step, is
  applied here, with a warning (after it, Keras 3's step raises: it has no momentum slots). `decay`
  (every OptimizerV2 had one, no Keras 3 optimizer has): TF 2.15's OptimizerV2 read only the decay
  it was built with, so an assignment did nothing, as here; a nonzero one warns, naming the schedule
  that does what it meant.

- `opt.get_gradients(loss, params)` (OpenNMT-tf calls it inside a tf.function): TF 2.4-2.10's
  meaning, tf.gradients of the scaled loss in the graph, unscaled, nothing clipped
  (`compat_lso/core/get_gradients.py`); eagerly a ValueError names the GradientTape instead.

- `opt.set_weights(values)`: TF 2.4-2.10's wrapper set the inner optimizer's state (TF 2.15's
  refused: "not yet been built"); Keras 3's sets the wrapper's own variables (step counter,
  learning rate, loss scale state) from the first values and ignores the rest. A list that is
  not exactly as long as those is refused, naming `opt.inner_optimizer.set_weights`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

import keras
import tensorflow as tf

from compat_lso.core import get_gradients as _get_gradients
from compat_lso.core.keras2_forms import DELEGATED, HYPERPARAMETERS
from compat_lso.keras3.native import learning_rate_slot

# Keras 2 names Keras 3's optimizers lack, and what to write instead (the one-line fix).
_REFUSED = {
    "weights": "use opt.variables() (Keras 2's variables) or opt.variables (Keras 3's list)",
    "get_weights": (
        "use [v.numpy() for v in opt.variables()] (the inner optimizer's step counter and "
        "slots, Keras 2's list)"
    ),
    "get_slot": (
        "Keras 3 keeps slots in opt.inner_optimizer.variables, named after the variable "
        "(e.g. 'dense_kernel_momentum'); read the one you need from there"
    ),
    "get_slot_names": "read the slot variables' names from opt.inner_optimizer.variables",
    "add_slot": (
        "create the variable in the inner optimizer's build() with add_variable_from_reference()"
    ),
    "_decayed_lr": (
        "use tf.cast(opt.learning_rate, dtype): Keras 3's learning_rate is the current value "
        "of a schedule"
    ),
    "decay": "Keras 3 optimizers have no decay; a learning rate schedule replaces it",
}

ITERATIONS_ASSIGNMENT = (
    "opt.iterations = ... cannot be honoured on Keras 3: its optimizers own their step counter "
    "(TF 2.15 allowed it only before the first step). Read the step from opt.iterations instead "
    "(e.g. tf.summary.experimental.set_step(opt.iterations)), or set its value with "
    "opt.iterations.assign(n)"
)


SET_WEIGHTS = (
    "set_weights() got {given} values, but this LossScaleOptimizer's own variables (what Keras 3 "
    "sets: its step counter, learning rate and loss scale state) are {own}. Keras 2's "
    "set_weights set the inner optimizer's state: call opt.inner_optimizer.set_weights(values), "
    "with the values in the order of opt.inner_optimizer.variables"
)

DECAY = (
    "opt.decay = {value!r} has no effect: Keras 3 optimizers have no decay, and TF 2.15's "
    "OptimizerV2 read only the decay it was built with. For Keras 2's decay, build the inner "
    "optimizer with learning_rate=keras.optimizers.schedules.InverseTimeDecay(rate, "
    "decay_steps=1, decay_rate={value!r})"
)

AFTER_A_TRACED_STEP = (
    "opt.{name} = {value!r} is set on the inner optimizer, but a step of this optimizer traced "
    "before (Model.fit's train function, or a tf.function of yours) keeps the {name} it was "
    "traced with: Keras 3 optimizers read it as a Python value when the step is traced (Keras "
    "2's OptimizerV2 kept momentum and its other hyperparameters in variables). Set it before "
    "the first step, or trace the step again (model.make_train_function(force=True), or a new "
    "tf.function)"
)

MOMENTUM_TURNED_ON = (
    "opt.momentum = {value!r} turns momentum on for a {kind} built with momentum=0: Keras 3's "
    "{kind} applies it from its first step (this run does), Keras 2's never applied a momentum "
    "set after it was built with none. To keep Keras 2's numbers, drop the assignment; to say "
    "what it means, build the inner optimizer with momentum={value!r}"
)

# Keras 3's optimizers that make momentum slots only if built with a momentum, as Keras 2's
# OptimizerV2 SGD and RMSprop applied one only if constructed with it.
_MOMENTUM_ONLY_IF_BUILT_WITH = (keras.optimizers.SGD, keras.optimizers.RMSprop)


def keras2_hyperparameter(optimizer: Any, name: str) -> bool:
    """Whether `opt.<name> = x` on this loss scale optimizer sets the inner optimizer's `name`, as
    Keras 2's wrapper of an OptimizerV2 did: one of OptimizerV2's hyperparameters that the inner
    optimizer has (Keras 2 kept the others on the wrapper, as this class does)."""
    inner = optimizer.__dict__.get("inner_optimizer")
    if name not in HYPERPARAMETERS or inner is None or hasattr(type(optimizer), name):
        return False
    return hasattr(inner, name)


def _nonzero(value: Any) -> bool:
    try:
        return bool(float(value) != 0.0)
    except (TypeError, ValueError):  # a callable, or a tensor that is not one number
        return True


class VariablesList(list):  # type: ignore[type-arg]
    """Keras 3's list of an optimizer's variables, which Keras 2 code may also call.

    Calling it, as `opt.variables()` did in Keras 2, gives Keras 2's list: the inner optimizer's
    step counter and slots (no learning rate), read at the time of the call.
    """

    def __init__(self, keras3_variables: Iterable[Any], keras2_variables: Callable[[], Any]):
        super().__init__(keras3_variables)
        self._keras2_variables = keras2_variables

    def __call__(self) -> list[Any]:
        return list(self._keras2_variables())


class Keras2OptimizerSurface:
    """Mixin for the Keras 3 class: Keras 2's `variables()`, `lr`, `_optimizer`, OptimizerV2's
    hyperparameters, and the refusals and warnings above."""

    inner_optimizer: Any
    learning_rate: Any

    @property
    def variables(self) -> VariablesList:
        native = super().variables  # type: ignore[misc]
        return VariablesList(native, self._keras2_variables)

    def _keras2_variables(self) -> list[Any]:
        inner = self.inner_optimizer
        rate = learning_rate_slot(inner)
        return [v for v in inner.variables if v is not rate]

    def get_gradients(self, loss: Any, params: Any) -> list[Any]:
        """TF 2.4-2.10's: tf.gradients of the scaled loss (in a graph only), unscaled."""
        return _get_gradients.get_gradients(self, loss, params)

    def set_weights(self, weights: Iterable[Any]) -> None:
        weights = list(weights)
        own = len(self._variables)  # type: ignore[attr-defined]
        if len(weights) != own:  # Keras 3 would set the first `own` and ignore the rest
            raise ValueError(SET_WEIGHTS.format(given=len(weights), own=own))
        super().set_weights(weights)  # type: ignore[misc]

    def __setattr__(self, name: str, value: Any) -> None:
        hyperparameter = keras2_hyperparameter(self, name)
        if (hyperparameter or name in DELEGATED) and self.__dict__.get("_traced_a_step"):
            warnings.warn(
                AFTER_A_TRACED_STEP.format(name=name, value=value), UserWarning, stacklevel=2
            )
        if hyperparameter:
            inner = self.__dict__["inner_optimizer"]
            if (
                name == "momentum"
                and isinstance(inner, _MOMENTUM_ONLY_IF_BUILT_WITH)
                and not inner.built
                and not _nonzero(inner.momentum)
                and _nonzero(value)
            ):  # once built without, Keras 3's step raises (no slots): not silent either
                kind = type(inner).__name__
                warnings.warn(
                    MOMENTUM_TURNED_ON.format(value=value, kind=kind), UserWarning, stacklevel=2
                )
            setattr(inner, name, value)
            return
        if name == "decay" and "inner_optimizer" in self.__dict__ and _nonzero(value):
            warnings.warn(DECAY.format(value=value), UserWarning, stacklevel=2)
        # On the wrapper; the settings in DELEGATED through tf24_surface's properties.
        super().__setattr__(name, value)

    @property
    def lr(self) -> Any:
        rate = self.learning_rate
        # Keras 2's `lr` was a tf.Variable. On the TensorFlow backend Keras 3's variable is backed
        # by one (`.value` outside an autocast scope): assigning it updates the same storage.
        backing = getattr(rate, "value", None)
        return backing if isinstance(backing, tf.Variable) else rate

    @lr.setter
    def lr(self, value: Any) -> None:
        self.learning_rate = value

    @property
    def iterations(self) -> Any:
        return super().iterations  # type: ignore[misc]

    @iterations.setter
    def iterations(self, value: Any) -> None:
        raise AttributeError(ITERATIONS_ASSIGNMENT)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: Keras 3's own attributes are untouched.
        if name == "_optimizer" and "inner_optimizer" in self.__dict__:
            # Keras 2's private name for the inner optimizer, which real trainers read
            # (NVIDIA's BERT logs `optimizer._optimizer._decayed_lr(...)`).
            return self.__dict__["inner_optimizer"]
        inner = self.__dict__.get("inner_optimizer")
        if name in HYPERPARAMETERS and inner is not None and hasattr(inner, name):
            return getattr(inner, name)  # Keras 2's wrapper of an OptimizerV2 read it there
        if name in _REFUSED:
            raise AttributeError(
                f"{type(self).__name__} has no {name!r} on Keras 3 (TF 2.15's default optimizer "
                f"had none either): {_REFUSED[name]}"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
