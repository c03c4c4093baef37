"""Constructor argument checks shared by both Keras generations.

The messages of the checks Keras 2 already had are Keras 2's own, word for word, so code that
matched on them keeps working; the rest (checks Keras 2 did not make) name the argument and say
what to pass instead.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

DEFAULT_INITIAL_SCALE = 2.0**15
DEFAULT_GROWTH_STEPS = 2000


class ResolvedArguments:
    """`dynamic`, `initial_scale` and `dynamic_growth_steps` with Keras 2's defaults filled in."""

    __slots__ = ("dynamic", "initial_scale", "dynamic_growth_steps")

    def __init__(self, dynamic: bool, initial_scale: float, dynamic_growth_steps: int | None):
        self.dynamic = dynamic
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps


def resolve(dynamic: Any, initial_scale: Any, dynamic_growth_steps: Any) -> ResolvedArguments:
    if not isinstance(dynamic, bool):
        # The old positional call `LossScaleOptimizer(opt, "dynamic")` lands here: on Keras 3
        # it would otherwise set `initial_scale="dynamic"` without complaint.
        raise TypeError(
            '"dynamic" argument to LossScaleOptimizer.__init__ must be a bool, but got: '
            f"{dynamic!r}"
        )
    if initial_scale is not None:
        initial_scale = _positive_finite_float("initial_scale", initial_scale)
    if dynamic_growth_steps is not None:
        dynamic_growth_steps = _positive_int("dynamic_growth_steps", dynamic_growth_steps)

    if dynamic:
        return ResolvedArguments(
            True,
            DEFAULT_INITIAL_SCALE if initial_scale is None else initial_scale,
            DEFAULT_GROWTH_STEPS if dynamic_growth_steps is None else dynamic_growth_steps,
        )
    if initial_scale is None:
        raise ValueError('"initial_scale" must be specified if "dynamic" is False')
    if dynamic_growth_steps is not None:
        raise ValueError(
            '"dynamic_growth_steps" must be None if "dynamic" is False, but got: '
            f"{dynamic_growth_steps}"
        )
    return ResolvedArguments(False, initial_scale, None)


def _positive_finite_float(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f'"{name}" must be a positive int or float (for example {name}=1024), '
            f"but got: {value!r} of type {type(value).__name__}"
        )
    as_float = float(value)
    if not math.isfinite(as_float) or as_float <= 0:
        raise ValueError(
            f'"{name}" must be a positive, finite number (for example {name}=1024), '
            f"but got: {value!r}"
        )
    return as_float


def _positive_int(name: str, value: Any) -> int:
    integral = isinstance(value, numbers.Integral) or (
        isinstance(value, float) and value.is_integer()
    )
    if isinstance(value, bool) or not integral:
        raise TypeError(
            f'"{name}" must be a positive int (for example {name}=2000), '
            f"but got: {value!r} of type {type(value).__name__}"
        )
    if value < 1:
        raise ValueError(f'"{name}" must be at least 1, but got: {value!r}')
    return int(value)


def check_inner_optimizer(
    inner_optimizer: Any, optimizer_types: tuple[type, ...], loss_scale_optimizer_type: type
) -> None:
    """Refuse what Keras 2 refused, with its messages, on every generation."""
    if isinstance(inner_optimizer, loss_scale_optimizer_type):
        raise TypeError(
            f"LossScaleOptimizer cannot wrap another LossScaleOptimizer, but got: {inner_optimizer}"
        )
    if not isinstance(inner_optimizer, optimizer_types):
        raise TypeError(_not_an_optimizer_message(inner_optimizer, optimizer_types))
    raise_if_strategy_unsupported()
    if getattr(inner_optimizer, "_is_wrapped_by_loss_scale_optimizer", False):
        # Two LSOs over one optimizer would share its slots and checkpoint keys.
        raise ValueError(
            '"inner_optimizer" is already wrapped by a LossScaleOptimizer. An optimizer '
            "can only be wrapped by a single LossScaleOptimizer"
        )


def _not_an_optimizer_message(inner_optimizer: Any, optimizer_types: tuple[type, ...]) -> str:
    # Keras 2.9-2.15's `tf.keras.mixed_precision.LossScaleOptimizer`, word for word, where both
    # optimizer kinds exist; on Keras 3 the one kind it has, in Keras 2's V2 class's words.
    if len(optimizer_types) > 1:
        message = (
            '"inner_optimizer" must be an instance of `tf.keras.optimizers.Optimizer` or '
            f"`tf.keras.optimizers.experimental.Optimizer`, but got: {inner_optimizer}."
        )
    else:
        message = (
            '"inner_optimizer" must be an instance of `tf.keras.optimizers.Optimizer`, but '
            f"got: {inner_optimizer}."
        )
    if type(inner_optimizer).__module__.startswith("tensorflow.python.keras."):
        # Keras 2.8's hint for TensorFlow's internal copy of Keras, which looks like Keras.
        message += (
            ' Please make sure "inner_optimizer" is not an instance of '
            "`tensorflow.python.keras.optimizers`, which is the legacy keras code and will be "
            "removed in future release. Please use the tf.keras public API instead."
        )
    return message


def raise_if_strategy_unsupported() -> None:
    """Keras 2's refusal of strategies that would unscale gradients once per compute replica.

    Keras 2 (keras/mixed_precision/loss_scale_optimizer.py, `_raise_if_strategy_unsupported`)
    refuses them at construction and in `apply_gradients`, with these messages.
    """
    import tensorflow as tf

    if not tf.distribute.has_strategy():
        return
    strategy = tf.distribute.get_strategy()
    supported = (
        tf.distribute.MultiWorkerMirroredStrategy,
        tf.compat.v1.distribute.experimental.MultiWorkerMirroredStrategy,
        tf.distribute.OneDeviceStrategy,
        tf.compat.v1.distribute.OneDeviceStrategy,
        tf.distribute.MirroredStrategy,
        tf.compat.v1.distribute.MirroredStrategy,
    )
    if isinstance(strategy, supported):
        return
    tpu_strategies = tuple(
        getattr(namespace, "TPUStrategy", None)
        for namespace in (tf.distribute, tf.distribute.experimental)
    )
    if isinstance(strategy, tuple(cls for cls in tpu_strategies if cls is not None)):
        raise ValueError(
            "Loss scaling is not supported with TPUStrategy. Loss scaling is unnecessary with "
            "TPUs, since they support bfloat16 instead of float16 and bfloat16 does not require "
            "loss scaling. You should remove the use of the LossScaleOptimizer when TPUs are used."
        )
    raise ValueError(
        "Loss scaling is not supported with the tf.distribute.Strategy: "
        f"{strategy.__class__.__name__}. Try using a different Strategy, e.g. a MirroredStrategy"
    )
