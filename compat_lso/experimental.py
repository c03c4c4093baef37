"""The deprecated TF 2.1-2.3 API: `experimental.LossScaleOptimizer(optimizer, loss_scale)`.

As in TF 2.4, the experimental class subclasses the non-experimental one and differs only in its
constructor, which translates `loss_scale` into `dynamic` / `initial_scale` /
`dynamic_growth_steps` exactly as the old class's own constructor did
(`_create_loss_scale_optimizer_from_v1_loss_scale` in Keras 2).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from typing import Any

import tensorflow as tf
from tensorflow.python.platform import tf_logging  # what tf.compat.v1.logging.warning calls

from compat_lso import _arguments, _backend, _config
from compat_lso._graph_rewrite import (
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)
from compat_lso._loss_scale_value import LossScaleValue
from compat_lso._warnings import warn_deprecated

__all__ = [
    "LossScale",
    "FixedLossScale",
    "DynamicLossScale",
    "LossScaleOptimizer",
    "Policy",
    "set_policy",
    "global_policy",
    "enable_mixed_precision_graph_rewrite",
    "disable_mixed_precision_graph_rewrite",
]


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


# Set while compat_lso itself constructs an old class (compile wrapping for a Policy, a policy
# for set_policy("name")): the user did not write that construction, so it does not warn.
_internal_construction = contextvars.ContextVar("_internal_construction", default=False)


@contextlib.contextmanager
def _constructed_by_compat_lso() -> Any:
    token = _internal_construction.set(True)
    try:
        yield
    finally:
        _internal_construction.reset(token)


def _warn_unless_internal(message: str) -> None:
    if not _internal_construction.get():
        warn_deprecated(message)


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


@_implementation.register_serializable("compat_lso.experimental", "Policy")
class Policy(_implementation.DTypePolicy):  # type: ignore[misc,name-defined]
    """TF 2.1-2.3's `Policy(name, loss_scale="auto")`: a dtype policy that carries a loss scale.

    `loss_scale="auto"` means dynamic loss scaling for "mixed_float16" and none otherwise.
    Once `compat_lso.install()` has run, `Model.compile` wraps the optimizer in a loss scale
    optimizer with this loss scale, as TF 2.4-2.8 did (None: no loss scaling).
    """

    def __init__(self, name: str, loss_scale: Any = "auto") -> None:
        _warn_unless_internal(
            "compat_lso.experimental.Policy (the TF 2.1-2.3 API) is deprecated. Replace it "
            f"with: tf.keras.mixed_precision.Policy({name!r}), and pass the loss scale to "
            "compat_lso.LossScaleOptimizer instead"
        )
        super().__init__(name)
        if isinstance(loss_scale, str) and loss_scale == "auto":
            loss_scale = "dynamic" if name == "mixed_float16" else None
        elif loss_scale and self.compute_dtype not in (None, "float16"):
            # TF 2.4-2.8's log message, word for word, through TensorFlow's logger as there.
            tf_logging.warning(
                "Creating a Policy with a loss scale is only useful for float16 policies. You "
                f"passed loss_scale={loss_scale!r} for policy {name}. Consider not passing any "
                "loss_scale instead."
            )
        self._loss_scale = _as_loss_scale(loss_scale)

    @property
    def loss_scale(self) -> Any:
        """The LossScale (`DynamicLossScale`, `FixedLossScale`) or None."""
        return self._loss_scale

    def __repr__(self) -> str:
        # TF 2.4-2.8's (the class was PolicyV1 there; TF 2.1-2.3 printed "<Policy ...>").
        return f'<PolicyV1 "{self.name}", loss_scale={self._loss_scale}>'

    def get_config(self) -> dict[str, Any]:
        config = dict(super().get_config())
        if self._loss_scale is None:
            config["loss_scale"] = None
        else:
            config["loss_scale"] = {
                "class_name": type(self._loss_scale).__name__,
                "config": self._loss_scale.get_config(),
            }
        return config

    @classmethod
    def from_config(
        cls, config: dict[str, Any], custom_objects: dict[str, Any] | None = None
    ) -> Policy:
        config = dict(config)
        loss_scale = config.pop("loss_scale", None)
        if isinstance(loss_scale, dict):
            arguments = _config.loss_scale_from_config(loss_scale)
            if arguments["dynamic"]:
                loss_scale = DynamicLossScale(
                    arguments["initial_scale"], arguments["dynamic_growth_steps"]
                )
            else:
                loss_scale = FixedLossScale(arguments["initial_scale"])
        with _constructed_by_compat_lso():
            return cls(config["name"], loss_scale=loss_scale)


def set_policy(policy: Any) -> None:
    """TF 2.1-2.3's `set_policy`: a policy name or a Policy becomes the global policy."""
    warn_deprecated(
        "compat_lso.experimental.set_policy is deprecated. Replace it with: "
        "tf.keras.mixed_precision.set_global_policy(...)"
    )
    if isinstance(policy, str):
        with _constructed_by_compat_lso():
            policy = Policy(policy)
    tf.keras.mixed_precision.set_global_policy(policy)


def global_policy() -> Policy:
    """TF 2.1-2.3's `global_policy`: the global policy, with a `loss_scale` as it had then."""
    policy = tf.keras.mixed_precision.global_policy()
    if isinstance(policy, Policy):
        return policy
    with _constructed_by_compat_lso():
        return Policy(policy.name)
