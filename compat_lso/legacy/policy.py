"""TF 2.1-2.3's `Policy(name, loss_scale="auto")`, `set_policy` and `global_policy`."""

from __future__ import annotations

from typing import Any

import tensorflow as tf
from tensorflow.python.platform import tf_logging  # what tf.compat.v1.logging.warning calls

from compat_lso import _backend
from compat_lso.core import config as _config
from compat_lso.core.deprecation import warn_deprecated
from compat_lso.legacy.construction import _constructed_by_compat_lso, _warn_unless_internal
from compat_lso.legacy.loss_scale import DynamicLossScale, FixedLossScale, _as_loss_scale

_implementation = _backend.implementation()


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
