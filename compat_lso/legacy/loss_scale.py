"""TF 2.1-2.3's `LossScale` classes, and how a `loss_scale` argument maps to TF 2.4's arguments.

`loss_scale_arguments` translates `loss_scale` into `dynamic` / `initial_scale` /
`dynamic_growth_steps` exactly as the old class's own constructor did
(`_create_loss_scale_optimizer_from_v1_loss_scale` in Keras 2); `replacement_call` writes the
TF 2.4 call that the deprecation warnings name.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from compat_lso.core import arguments as _arguments
from compat_lso.core import config as _config


class LossScale:
    """Base class of the TF 2.1-2.3 loss scale descriptions.

    The loss scaling algorithm itself lives in `compat_lso.LossScaleOptimizer`; these classes
    carry the settings that old code passes to the experimental optimizer's `loss_scale`.
    """

    def __call__(self) -> tf.Tensor:
        """The loss scale at the start of training, as a float32 scalar tensor."""
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")

    def get_config(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement get_config")

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> LossScale:
        return cls(**config)

    def __repr__(self) -> str:
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({arguments})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.get_config() == other.get_config()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(self.get_config().items()))))


class FixedLossScale(LossScale):
    """A loss scale that never changes: `FixedLossScale(128)`."""

    def __init__(self, loss_scale_value: float) -> None:
        # TF's messages, word for word (tensorflow/python/training/experimental/loss_scale.py).
        if isinstance(loss_scale_value, bool) or not isinstance(loss_scale_value, (int, float)):
            raise ValueError("loss_scale_value must be a Python int or float.")
        if loss_scale_value < 1:
            raise ValueError("loss_scale_value must be at least 1.")
        self._loss_scale_value = float(loss_scale_value)

    @property
    def loss_scale_value(self) -> float:
        return self._loss_scale_value

    def __call__(self) -> tf.Tensor:
        return tf.constant(self._loss_scale_value, dtype=tf.float32)

    def get_config(self) -> dict[str, Any]:
        return {"loss_scale_value": self._loss_scale_value}

    def __repr__(self) -> str:
        return f"FixedLossScale({self._loss_scale_value})"  # TensorFlow's form


class DynamicLossScale(LossScale):
    """A loss scale that halves on overflow and doubles after `increment_period` good steps."""

    def __init__(
        self,
        initial_loss_scale: float = 2**15,
        increment_period: int = 2000,
        multiplier: float = 2.0,
    ) -> None:
        self._initial_loss_scale = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)

    @property
    def initial_loss_scale(self) -> float:
        return self._initial_loss_scale

    @property
    def increment_period(self) -> int:
        return self._increment_period

    @property
    def multiplier(self) -> float:
        return self._multiplier

    def __call__(self) -> tf.Tensor:
        return tf.constant(self._initial_loss_scale, dtype=tf.float32)

    def get_config(self) -> dict[str, Any]:
        return {
            "initial_loss_scale": self._initial_loss_scale,
            "increment_period": self._increment_period,
            "multiplier": self._multiplier,
        }


def _tensorflow_loss_scale_classes() -> tuple[Any, Any, Any]:
    """TensorFlow's own classes, which old code passes too (still in TF 2.15 and 2.21)."""
    v1 = tf.compat.v1.mixed_precision
    return v1.LossScale, v1.FixedLossScale, v1.DynamicLossScale


def loss_scale_arguments(loss_scale: Any) -> dict[str, Any]:
    """`loss_scale` -> the non-experimental constructor's keyword arguments, defaults omitted."""
    tf_loss_scale, tf_fixed, tf_dynamic = _tensorflow_loss_scale_classes()
    if isinstance(loss_scale, (int, float)):
        return {"dynamic": False, "initial_scale": float(loss_scale)}
    if isinstance(loss_scale, (FixedLossScale, tf_fixed)):
        return {"dynamic": False, "initial_scale": loss_scale.get_config()["loss_scale_value"]}
    if isinstance(loss_scale, str) and loss_scale == "dynamic":
        return {}
    if isinstance(loss_scale, (DynamicLossScale, tf_dynamic)):
        if loss_scale.multiplier != 2:
            raise ValueError(
                'When passing a DynamicLossScale to "loss_scale", DynamicLossScale.multiplier '
                f"must be 2. Got: {loss_scale}"
            )
        return _without_defaults(
            {
                "initial_scale": float(loss_scale.initial_loss_scale),
                "dynamic_growth_steps": int(loss_scale.increment_period),
            }
        )
    if isinstance(loss_scale, (LossScale, tf_loss_scale)):
        # The experimental class's own message (Keras 2.8's LossScaleOptimizerV1), word for word.
        raise TypeError(
            "Passing a LossScale that is not a FixedLossScale or a DynamicLossScale is no "
            f"longer supported. Got: {loss_scale}"
        )
    if isinstance(loss_scale, dict) and "class_name" in loss_scale:
        # A serialized LossScale, as TF 2.1-2.3 wrote it into optimizer configs.
        arguments = _config.loss_scale_from_config(loss_scale)
        if not arguments["dynamic"]:
            return {"dynamic": False, "initial_scale": float(arguments["initial_scale"])}
        return _without_defaults(
            {
                "initial_scale": float(arguments["initial_scale"]),
                "dynamic_growth_steps": int(arguments["dynamic_growth_steps"]),
            }
        )
    raise ValueError(
        'Invalid value passed to loss_scale. loss_scale must be the string "dynamic" '
        "(recommended), an int, a float, a FixedLossScale, or a DynamicLossScale. Got value: "
        f"{loss_scale}"
    )


def _without_defaults(arguments: dict[str, Any]) -> dict[str, Any]:
    defaults = {
        "initial_scale": _arguments.DEFAULT_INITIAL_SCALE,
        "dynamic_growth_steps": _arguments.DEFAULT_GROWTH_STEPS,
    }
    return {key: value for key, value in arguments.items() if value != defaults[key]}


def replacement_call(arguments: dict[str, Any], optimizer_source: str = "optimizer") -> str:
    """The non-experimental call that constructs the same optimizer, as code."""
    rendered = [optimizer_source]
    for key in ("dynamic", "initial_scale", "dynamic_growth_steps"):
        if key in arguments:
            rendered.append(f"{key}={_render_number(arguments[key])}")
    return f"compat_lso.LossScaleOptimizer({', '.join(rendered)})"


def _render_number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def _as_loss_scale(loss_scale: Any) -> Any:
    """TF 2.3's `loss_scale_module.get`: None, "dynamic", a number, or a LossScale."""
    if loss_scale is None or isinstance(
        loss_scale, (LossScale, _tensorflow_loss_scale_classes()[0])
    ):
        return loss_scale
    if isinstance(loss_scale, str) and loss_scale == "dynamic":
        return DynamicLossScale()
    if isinstance(loss_scale, (int, float)) and not isinstance(loss_scale, bool):
        return FixedLossScale(loss_scale)
    raise ValueError(
        f'Invalid value passed to loss_scale: {loss_scale!r}. loss_scale must be "auto", '
        '"dynamic", None, an int, a float, or a LossScale (for example '
        'Policy("mixed_float16", loss_scale="dynamic")).'
    )
