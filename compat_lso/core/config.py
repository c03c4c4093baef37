"""Read every historical LossScaleOptimizer config form; the classes write the TF 2.4 form.

The forms in the wild:

- TF 2.1-2.3 (the experimental class): `{"optimizer": ..., "loss_scale": {"class_name":
  "DynamicLossScale" | "FixedLossScale", "config": {...}}}`.
- TF 2.4-2.15 and tf_keras: `{"inner_optimizer": ..., "dynamic": bool, "initial_scale": float,
  "dynamic_growth_steps": int | None}`.
- Keras 3: `{"name": ..., "inner_optimizer": ..., "initial_scale": ..., "dynamic_growth_steps":
  ...}`, always dynamic. Keras 3.0-3.11 also write the base optimizer's keys (`clipnorm`,
  `use_ema`, ...) at their defaults: their get_config() starts from `super().get_config()`; Keras
  3.12's writes only its own keys.
"""

from __future__ import annotations

import re
from typing import Any

from compat_lso.core import arguments as _arguments

# Keras 3 names an unnamed LossScaleOptimizer `loss_scale_optimizer`, `loss_scale_optimizer_1`...
# Such a name says nothing about the optimizer, so it is not carried over.
_GENERATED_NAME = re.compile(r"loss_scale_optimizer(_\d+)?")

_TF_2_4_KEYS = ("inner_optimizer", "dynamic", "initial_scale", "dynamic_growth_steps")

# The base optimizer's keys in Keras 3.0-3.11's LossScaleOptimizer config, with the defaults those
# releases write. The outer optimizer never used them (it hands the unscaled gradients to the
# inner optimizer), so at these values they say nothing; any other value is refused, not dropped.
KERAS_3_BASE_OPTIMIZER_DEFAULTS = {
    "weight_decay": None,
    "clipnorm": None,
    "global_clipnorm": None,
    "clipvalue": None,
    "use_ema": False,
    "ema_momentum": 0.99,
    "ema_overwrite_frequency": None,
    "loss_scale_factor": None,
    "gradient_accumulation_steps": None,
}


def read(config: dict[str, Any]) -> dict[str, Any]:
    """Any known form -> `{inner_optimizer, dynamic, initial_scale, dynamic_growth_steps[, name]}`.

    `inner_optimizer` is left as it was found (a serialized dict or an optimizer object); the
    backend module deserializes it. `name` is kept only where the config carries one.
    """
    if not isinstance(config, dict):
        raise TypeError(
            f"A LossScaleOptimizer config must be a dict, but got: {config!r} of type "
            f"{type(config).__name__}"
        )
    config = dict(config)
    if "loss_scale" in config or "optimizer" in config:
        return _read_tf_2_3_form(config)
    if "inner_optimizer" not in config:
        raise ValueError(
            "A LossScaleOptimizer config needs an 'inner_optimizer' (TF 2.4+ and Keras 3 form) "
            f"or 'optimizer' and 'loss_scale' (TF 2.1-2.3 form), but has keys: {sorted(config)}"
        )
    normalized = {
        "inner_optimizer": config.pop("inner_optimizer"),
        # Keras 3's form has no `dynamic`: Keras 3 loss scaling is always dynamic.
        "dynamic": config.pop("dynamic", True),
        "initial_scale": config.pop("initial_scale", None),
        "dynamic_growth_steps": config.pop("dynamic_growth_steps", None),
    }
    name = config.pop("name", None)
    if name is not None and not _GENERATED_NAME.fullmatch(str(name)):
        normalized["name"] = name
    _drop_keras_3_base_optimizer_defaults(config)
    if config:
        raise ValueError(
            f"Unknown keys in a LossScaleOptimizer config: {sorted(config)}. Known keys: "
            f"{[*_TF_2_4_KEYS, 'name']}"
        )
    return normalized


def _drop_keras_3_base_optimizer_defaults(config: dict[str, Any]) -> None:
    for key, default in KERAS_3_BASE_OPTIMIZER_DEFAULTS.items():
        if key not in config:
            continue
        value = config.pop(key)
        if value != default:
            raise ValueError(
                f"A LossScaleOptimizer config sets {key}={value!r}, but a loss scale optimizer "
                f"never applies {key}: its inner optimizer does. Move {key}={value!r} into the "
                f"config under 'inner_optimizer' and remove it here (the default is {default!r})."
            )


def loss_scale_from_config(serialized: Any) -> dict[str, Any]:
    """A serialized TF 2.1-2.3 `LossScale` -> `{dynamic, initial_scale, dynamic_growth_steps}`."""
    if isinstance(serialized, str):
        serialized = {"class_name": serialized, "config": {}}
    if not isinstance(serialized, dict) or "class_name" not in serialized:
        raise ValueError(
            "A serialized loss_scale must look like {'class_name': 'DynamicLossScale' or "
            f"'FixedLossScale', 'config': {{...}}}}, but got: {serialized!r}"
        )
    class_name = serialized["class_name"]
    arguments = dict(serialized.get("config") or {})
    if class_name == "FixedLossScale":
        return {
            "dynamic": False,
            "initial_scale": arguments["loss_scale_value"],
            "dynamic_growth_steps": None,
        }
    if class_name == "DynamicLossScale":
        multiplier = arguments.get("multiplier", 2.0)
        if multiplier != 2:
            described = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
            # Keras 2's message, word for word (it printed the DynamicLossScale object).
            raise ValueError(
                "Cannot deserialize LossScaleOptimizer with a DynamicLossScale whose "
                f"multiplier is not 2. Got DynamicLossScale: DynamicLossScale({described})"
            )
        return {
            "dynamic": True,
            "initial_scale": arguments.get("initial_loss_scale", _arguments.DEFAULT_INITIAL_SCALE),
            "dynamic_growth_steps": arguments.get(
                "increment_period", _arguments.DEFAULT_GROWTH_STEPS
            ),
        }
    raise ValueError(
        "Serialized LossScaleOptimizers with a LossScale that is neither a FixedLossScale "
        f"nor a DynamicLossScale can no longer be deserialized. Got: {class_name!r}"
    )


def _read_tf_2_3_form(config: dict[str, Any]) -> dict[str, Any]:
    missing = [key for key in ("optimizer", "loss_scale") if key not in config]
    if missing:
        raise ValueError(
            f"A TF 2.1-2.3 LossScaleOptimizer config needs 'optimizer' and 'loss_scale'; "
            f"missing: {missing}"
        )
    normalized = {"inner_optimizer": config.pop("optimizer")}
    normalized.update(loss_scale_from_config(config.pop("loss_scale")))
    config.pop("name", None)
    if config:
        raise ValueError(
            f"Unknown keys in a TF 2.1-2.3 LossScaleOptimizer config: {sorted(config)}"
        )
    return normalized
