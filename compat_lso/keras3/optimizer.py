"""The shim's class on Keras 3 (`tf.keras` on TF >= 2.16): TF 2.4 semantics on Keras 3's own.

Subclassing Keras 3's `LossScaleOptimizer` keeps Keras's isinstance checks true (`compile()`
does not wrap it again under `mixed_float16`). What Keras 3 changed, and what this class puts
back:

- Fixed loss scaling (`dynamic=False`) is gone from Keras 3: here it applies every step at a
  constant scale, as in Keras 2.
- Keras 3's dynamic update has no floor (1 -> 0.5), doubles without an overflow check, and a
  skipped step does not advance `iterations`. Here the update is Keras 2's: the scale never
  drops below 1, never doubles to inf, and a skipped step still counts as an iteration.
- Keras 3's `apply_gradients` takes *scaled* gradients and divides them; in the TF 2.4 API it
  takes gradients that `get_unscaled_gradients` already divided. Both callers are served:
  `Model.fit` calls `scale_loss` before `apply_gradients`, so gradients are divided exactly as
  Keras 3 does when `scale_loss` ran since the last apply, and are taken as they are otherwise.
- `get_scaled_loss`, `get_unscaled_gradients`, `minimize`, `dynamic`, `loss_scale` and
  `dynamic_counter` are back.
- Keras 3 makes optimizer names unique (`sgd`, `sgd_1`), so equal constructions had unequal
  configs. `get_config()` writes the TF 2.4 form, leaving out names Keras generated.

Here: the arguments, the constructor and the config. `keras3/update_rule.py` holds the update
rule and `keras3/tf24_surface.py` the TF 2.4 methods (both mixed into the class below),
`keras3/native.py` Keras 3's own names and release gates, `keras3/keras2_parts.py` the
checkpoint layout.
"""

from __future__ import annotations

import re
from typing import Any

import keras
from keras.src.utils.naming import to_snake_case
from packaging.version import Version

from compat_lso.core import arguments as _arguments
from compat_lso.core import config as _config
from compat_lso.core.keras_version import keras_version
from compat_lso.keras3.keras2_parts import Keras2CheckpointLayout
from compat_lso.keras3.keras2_surface import ITERATIONS_ASSIGNMENT, Keras2OptimizerSurface
from compat_lso.keras3.native import (
    OPTIMIZER_TYPES,
    DTypePolicy,
    NativeLossScaleOptimizer,
    get_custom_objects,
    register_serializable,
)
from compat_lso.keras3.tf24_surface import TF24Surface
from compat_lso.keras3.update_rule import Keras2UpdateRule

# What `compat_lso._backend.implementation()` gives the rest of the shim, on either generation.
__all__ = [
    "LossScaleOptimizer",
    "NativeLossScaleOptimizer",
    "OPTIMIZER_TYPES",
    "DTypePolicy",
    "register_serializable",
    "get_custom_objects",
    "deserialize_inner_optimizer",
]

# Keras 3.7 (keras-team/keras#20541) accepts `aggregation="none"`, which the native class has
# passed for its scale and counter since. Keras 3.0-3.1 have no `aggregation` argument, 3.2-3.6
# refuse "none"; their native class passes none, and so does the shim there.
if keras_version() >= Version("3.7"):
    _NOT_AGGREGATED: dict[str, str] = {"aggregation": "none"}
else:
    _NOT_AGGREGATED = {}

# Keras 2 optimizer config keys that Keras 3 optimizers reject. A nonzero `decay` has no
# Keras 3 equivalent other than a learning-rate schedule, so only its default is dropped.
_KERAS_2_ONLY_OPTIMIZER_KEYS = ("is_legacy_optimizer", "jit_compile")


@register_serializable("compat_lso", "LossScaleOptimizer")
class LossScaleOptimizer(
    Keras2OptimizerSurface,
    TF24Surface,
    Keras2UpdateRule,
    Keras2CheckpointLayout,
    NativeLossScaleOptimizer,  # type: ignore[misc,valid-type]
):
    """TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer`, on this Keras generation.

    Args:
        inner_optimizer: the optimizer to wrap.
        dynamic: whether the loss scale changes during training (must be a bool).
        initial_scale: the starting loss scale (default 2**15), or with `dynamic=False` the
            fixed one (then required). A positive finite number.
        dynamic_growth_steps: with `dynamic=True`, the scale doubles after this many steps
            with finite gradients (default 2000). A positive int; None with `dynamic=False`.

    An instance of the backend's native `LossScaleOptimizer`. Dynamic scaling follows Keras 2's
    rule: a step with non-finite gradients is skipped and halves the scale (never below 1).
    """

    def __init__(
        self,
        inner_optimizer: Any,
        dynamic: bool = True,
        initial_scale: float | None = None,
        dynamic_growth_steps: int | None = None,
        name: str | None = None,
    ) -> None:
        _arguments.check_inner_optimizer(inner_optimizer, OPTIMIZER_TYPES, NativeLossScaleOptimizer)
        resolved = _arguments.resolve(dynamic, initial_scale, dynamic_growth_steps)
        super().__init__(
            inner_optimizer,
            initial_scale=resolved.initial_scale,
            dynamic_growth_steps=resolved.dynamic_growth_steps,
            name=name,
        )
        self._dynamic = resolved.dynamic
        self._name_was_given = name is not None
        # Keras 2's record of whether the TF 2.4 calls ran, for its warning in apply_gradients.
        self._loss_has_been_scaled = False
        self._gradients_have_been_unscaled = False
        inner_optimizer._is_wrapped_by_loss_scale_optimizer = True
        if self._dynamic:
            # Created here, not in `build()` as Keras 3 does, so that `loss_scale` and
            # `dynamic_counter` are variables from the start, as in Keras 2. Same names and
            # order as Keras 3's, so checkpoints and `.keras` files line up with the native class.
            self.step_counter = self.add_variable(
                shape=(), dtype="int", initializer="zeros", name="step_counter", **_NOT_AGGREGATED
            )
            self.dynamic_scale = self.add_variable(
                shape=(),
                dtype="float32",
                initializer=keras.initializers.Constant(self.initial_scale),
                name="dynamic_scale",
                **_NOT_AGGREGATED,
            )

    # Keras 3.9 (keras-team/keras#20901) made the native class's `iterations` the inner
    # optimizer's, as Keras 2's was. Before, it was the wrapper's own counter, which nothing
    # advances (Keras 3.0-3.4's constructor assigns it here, hence the setter).
    if keras_version() < Version("3.9"):

        @property
        def iterations(self) -> Any:
            inner = self.__dict__.get("inner_optimizer")
            return inner.iterations if inner is not None else self._iterations

        @iterations.setter
        def iterations(self, value: Any) -> None:
            if "inner_optimizer" in self.__dict__:  # as read-only as Keras 3.9's
                raise AttributeError(ITERATIONS_ASSIGNMENT)
            self._iterations = value

    # -- Config --------------------------------------------------------------------------

    def get_config(self) -> dict[str, Any]:
        """The TF 2.4 form: inner_optimizer, dynamic, initial_scale, dynamic_growth_steps."""
        config: dict[str, Any] = {
            "inner_optimizer": _serialize_without_generated_name(self.inner_optimizer),
            "dynamic": self._dynamic,
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }
        if self._name_was_given:
            config["name"] = self.name
        return config

    @classmethod
    def from_config(
        cls, config: dict[str, Any], custom_objects: dict[str, Any] | None = None
    ) -> Any:
        """Build one from a config in any historical form (TF 2.1-2.3, TF 2.4-2.15, Keras 3)."""
        normalized = _config.read(config)
        inner_optimizer = deserialize_inner_optimizer(
            normalized.pop("inner_optimizer"), custom_objects
        )
        return cls._from_resolved_config(inner_optimizer, normalized)

    @classmethod
    def _from_resolved_config(cls, inner_optimizer: Any, arguments: dict[str, Any]) -> Any:
        return cls(inner_optimizer, **arguments)


def _serialize_without_generated_name(optimizer: Any) -> dict[str, Any]:
    serialized: dict[str, Any] = keras.saving.serialize_keras_object(optimizer)
    inner_config = serialized.get("config")
    if isinstance(inner_config, dict) and "name" in inner_config:
        base_name = to_snake_case(type(optimizer).__name__)
        # Keras names an unnamed optimizer `sgd`, then `sgd_1`, `sgd_2`... in creation order.
        if re.fullmatch(re.escape(base_name) + r"(_\d+)?", str(inner_config["name"])):
            inner_config["name"] = base_name
    return serialized


def deserialize_inner_optimizer(serialized: Any, custom_objects: dict[str, Any] | None) -> Any:
    if isinstance(serialized, OPTIMIZER_TYPES):
        return serialized
    serialized = dict(serialized)
    inner_config = dict(serialized.get("config") or {})
    for key in _KERAS_2_ONLY_OPTIMIZER_KEYS:
        inner_config.pop(key, None)
    if "lr" in inner_config:  # the TF 2.0-era spelling
        inner_config.setdefault("learning_rate", inner_config.pop("lr"))
        inner_config.pop("lr", None)
    decay = inner_config.pop("decay", 0.0)
    if decay:
        raise ValueError(
            f"The saved inner optimizer uses decay={decay}, which Keras 3 optimizers do not "
            "have. Replace it with a learning rate schedule, e.g. "
            "learning_rate=keras.optimizers.schedules.InverseTimeDecay(lr, 1, decay)."
        )
    serialized["config"] = inner_config
    return keras.optimizers.deserialize(serialized, custom_objects=custom_objects)
