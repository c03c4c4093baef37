"""TF 2.1-2.3's `experimental.LossScaleOptimizer(optimizer, loss_scale)`.

As in TF 2.4, the experimental class subclasses the non-experimental one (this generation's,
picked by `compat_lso._backend`) and differs only in its constructor and in `loss_scale`, which
is callable as in TF 2.2/2.3.
"""

from __future__ import annotations

import functools
from typing import Any

import tensorflow as tf

from compat_lso import _backend
from compat_lso.core import arguments as _arguments
from compat_lso.legacy.construction import _constructed_by_compat_lso, _warn_unless_internal
from compat_lso.legacy.loss_scale import DynamicLossScale, loss_scale_arguments, replacement_call
from compat_lso.legacy.loss_scale_value import LossScaleValue

_implementation = _backend.implementation()


class LossScaleOptimizer(_implementation.LossScaleOptimizer):  # type: ignore[misc,name-defined]
    """Deprecated: use `compat_lso.LossScaleOptimizer`; the warning shows the exact call."""

    def __init__(self, optimizer: Any, loss_scale: Any) -> None:
        arguments = loss_scale_arguments(loss_scale)
        _warn_unless_internal(
            "compat_lso.experimental.LossScaleOptimizer (the TF 2.1-2.3 API, removed from "
            "TensorFlow in 2.9) is deprecated. Replace it with: "
            f"{replacement_call(arguments)}"
        )
        super().__init__(optimizer, **arguments)

    @classmethod
    def _without_warning(cls, optimizer: Any, loss_scale: Any) -> Any:
        with _constructed_by_compat_lso():
            return cls(optimizer, loss_scale)

    @property
    def loss_scale(self) -> LossScaleValue:
        """The current loss scale: a float32 tensor, and callable as in TF 2.2/2.3.

        TF 2.2/2.3 returned a `LossScale` object here (`opt.loss_scale()` gave the current
        scale); TF 2.4 returned a tensor. Old code uses both, so this is both.
        """
        read = functools.partial(
            super(LossScaleOptimizer, type(self)).loss_scale.fget,  # type: ignore[attr-defined]
            self,
        )
        if not tf.executing_eagerly():
            # Building a graph, the read is an op that gives the current value each run: made
            # here, as TF 2.4 made it, so that the graph is not empty when a session runs it.
            tensor = read()
            return LossScaleValue(lambda: tensor)
        return LossScaleValue(read)

    @classmethod
    def _from_resolved_config(cls, inner_optimizer: Any, arguments: dict[str, Any]) -> Any:
        if not arguments.get("dynamic", True):
            return cls(inner_optimizer, arguments["initial_scale"])
        loss_scale = DynamicLossScale(
            initial_loss_scale=arguments.get("initial_scale") or _arguments.DEFAULT_INITIAL_SCALE,
            increment_period=(
                arguments.get("dynamic_growth_steps") or _arguments.DEFAULT_GROWTH_STEPS
            ),
        )
        return cls(inner_optimizer, loss_scale)


def _serialize_as_the_new_class(experimental_class: type) -> None:
    """Save the experimental class as one that loads as the new class, as TF 2.4-2.8 did.

    Keras 2.4-2.8 serialized it as "LossScaleOptimizerV1", which `optimizers.deserialize`
    mapped to the non-experimental class: a loaded model needs no deprecated class and does not
    warn again. Here it is written under the new class's registered name, and the name it was
    registered under before ("compat_lso.experimental>LossScaleOptimizer", in files already
    written) loads as the new class too.
    """
    new_class = _implementation.LossScaleOptimizer
    registry = _implementation.get_custom_objects()
    # Registering gives the class its name for saving, and binds the name to it for loading.
    # Keras 2.12 refuses a name (or a class) registered before, so the new class's name is freed
    # for the experimental class, then bound back to the new class for loading.
    del registry["compat_lso>LossScaleOptimizer"]
    _implementation.register_serializable("compat_lso", "LossScaleOptimizer")(experimental_class)
    registry["compat_lso>LossScaleOptimizer"] = new_class
    registry["compat_lso.experimental>LossScaleOptimizer"] = new_class


_serialize_as_the_new_class(LossScaleOptimizer)


# -- The rest of the TF 2.1-2.3 `tf.keras.mixed_precision.experimental` namespace -------------
