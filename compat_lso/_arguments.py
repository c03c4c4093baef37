"""Constructor argument checks shared by both Keras generations.

The messages of the checks Keras 2 already had are Keras 2's own, word for word, so code that
matched on them keeps working; the rest name the argument and say what to pass instead.
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
        accepted = " or ".join(f"`{t.__module__}.{t.__qualname__}`" for t in optimizer_types)
        raise TypeError(
            f'"inner_optimizer" must be an instance of {accepted} (for example '
            f"tf.keras.optimizers.SGD()), but got: {inner_optimizer!r}"
        )
    if getattr(inner_optimizer, "_is_wrapped_by_loss_scale_optimizer", False):
        # Two LSOs over one optimizer would share its slots and checkpoint keys.
        raise ValueError(
            '"inner_optimizer" is already wrapped by a LossScaleOptimizer. An optimizer '
            "can only be wrapped by a single LossScaleOptimizer"
        )
