"""Keras 3's own names that the shim builds on, and the Keras 3 releases whose classes differ.

The rest of `compat_lso/keras3/` imports Keras 3 through here where a release gate decides what
a name is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import keras
from packaging.version import Version

from compat_lso.core.keras_version import keras_version

NativeLossScaleOptimizer = keras.optimizers.LossScaleOptimizer
OPTIMIZER_TYPES = (keras.optimizers.Optimizer,)
register_serializable = keras.saving.register_keras_serializable
get_custom_objects = keras.saving.get_custom_objects  # the registry itself, documented as such


def learning_rate_slot(optimizer: Any) -> Any:
    """What a Keras 3 optimizer keeps its learning rate in: the variable it lists in `variables`
    (after the step counter) for a constant rate, else a schedule or callable, which it does not
    list. Private `_learning_rate` (Keras 3.0-3.15): the public `learning_rate` reads a schedule's
    current value instead."""
    return getattr(optimizer, "_learning_rate", None)


if TYPE_CHECKING:
    # For mypy only: a mixin's methods run on the shim's class, an instance of Keras 3's.
    OptimizerMixin = NativeLossScaleOptimizer
else:
    OptimizerMixin = object

# -- Where Keras 3 releases differ (TF 2.16 accepts Keras 3.0 and later) ----------------------

# Keras 3.1 (keras-team/keras#19263, int8 quantization) made `DTypePolicy` a base that parses no
# name (a subclass computed in float32, whatever its name), put the parsing in `FloatDTypePolicy`
# and gave `DTypePolicy` a `__new__(cls, name)` that refuses a subclass's other arguments (Keras
# 3.3's takes them); Keras 3.4 (keras-team/keras#19711) merged the two classes back.
if Version("3.1") <= keras_version() < Version("3.4"):

    class DTypePolicy(keras.dtype_policies.FloatDTypePolicy):  # type: ignore[misc,name-defined]
        """`FloatDTypePolicy` whose subclasses may take more arguments than the name."""

        def __new__(cls, name: str, *args: Any, **kwargs: Any) -> Any:
            return super().__new__(cls, name)

else:
    DTypePolicy = keras.mixed_precision.DTypePolicy  # type: ignore[misc]
