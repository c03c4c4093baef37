"""One canonical form for the LossScaleOptimizer configs of every generation, for comparing them.

TensorFlow-free: configs are plain dicts, and optimizer objects are read through their own
`get_config()`. The canonical form is the TF 2.4 form with every default filled in:

    {"inner_optimizer": {"class_name": ..., "config": {...}}, "dynamic": bool,
     "initial_scale": number, "dynamic_growth_steps": int | None[, "name": str]}

What it leaves out, because it cannot change what the optimizer computes (docs/testing.md has the
reasons in full): Keras-generated names, where a class lives (`module`), the legacy/new optimizer
family, settings that only one generation has when they are off, and the difference between
numbers that are the same float32 (`64` and `64.0`; `0.01` and `0.009999999776482582`).
Canonicalizing a canonical config gives it back unchanged.
"""

from __future__ import annotations

import math
import numbers
import re
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from compat_lso.core import arguments as _arguments
from compat_lso.core import config as _config

Path = tuple[str | int, ...]

# The class names LossScaleOptimizers are serialized under: Keras's public and concrete classes
# (Keras 2's metaclass builds `LossScaleOptimizerV3` around a new-style inner optimizer) and the
# registered names of compat_lso's classes (`compat_lso>LossScaleOptimizer`, after the `>`).
_LSO_CLASS_NAMES = frozenset(
    {"LossScaleOptimizer", "LossScaleOptimizerV3", "BaseLossScaleOptimizer"}
)

# Inner optimizer settings that one generation writes and another lacks, with the value that
# means "off": with that value, the optimizer computes exactly what one without the key does.
# Any other value is compared (and differs from a config that lacks the key).
_OFF_VALUES: dict[str, bool | int | None] = {
    "clipnorm": None,  # legacy OptimizerV2 writes the clipping keys only when set
    "clipvalue": None,
    "global_clipnorm": None,
    "weight_decay": None,  # new-style optimizers (Keras 2 `optimizers.Optimizer`, Keras 3)
    "loss_scale_factor": None,  # Keras 3 only
    "gradient_accumulation_steps": None,  # Keras 3 only
    "decay": 0,  # legacy OptimizerV2 only
    "use_ema": False,  # new-style optimizers
}
# Meaningful only with `use_ema=True`.
_EMA_KEYS = ("ema_momentum", "ema_overwrite_frequency")
# Never settings of the update: the optimizer family (which the running Keras decides, and
# `from_config` translates) and whether the update step is XLA-compiled (True on GPU, False on
# CPU for the same code in Keras 2).
_NOT_SETTINGS = ("is_legacy_optimizer", "jit_compile")

_FLOAT32 = struct.Struct("f")


class ConfigError(ValueError):
    """A value that is neither a LossScaleOptimizer nor a config one of them wrote."""


def canonical_config(value: object) -> dict[str, Any]:
    """The canonical form of a LossScaleOptimizer or of its config in any historical form."""
    config = _loss_scale_optimizer_config(value)
    try:
        read = _config.read(config)
        resolved = _arguments.resolve(
            read["dynamic"], read["initial_scale"], read["dynamic_growth_steps"]
        )
    except (TypeError, ValueError) as error:
        raise ConfigError(f"not a valid LossScaleOptimizer config: {error}") from None
    except KeyError as error:
        raise ConfigError(f"not a valid LossScaleOptimizer config: missing key {error}") from None
    canonical: dict[str, Any] = {
        "inner_optimizer": _canonical_optimizer(read["inner_optimizer"]),
        "dynamic": resolved.dynamic,
        "initial_scale": _canonical_float(resolved.initial_scale),
        "dynamic_growth_steps": resolved.dynamic_growth_steps,
    }
    if "name" in read:  # `_config.read` keeps a name only where the user chose it
        canonical["name"] = _canonical_value(read["name"], ("name",))
    return canonical


def _loss_scale_optimizer_config(value: object) -> dict[str, Any]:
    if isinstance(value, Mapping):
        if "class_name" in value:
            return _serialized_loss_scale_optimizer_config(value)
        return dict(value)
    if _is_loss_scale_optimizer(value):
        config = value.get_config()  # type: ignore[attr-defined]
        if not isinstance(config, Mapping):
            raise ConfigError(
                f"{type(value).__name__}.get_config() returned {config!r}, not a dict"
            )
        return dict(config)
    if hasattr(value, "get_config"):
        raise ConfigError(
            f"expected a LossScaleOptimizer, but got a {type(value).__name__}: wrap it, e.g. "
            "compat_lso.LossScaleOptimizer(optimizer)"
        )
    raise ConfigError(
        "expected a LossScaleOptimizer or its config (a dict), but got "
        f"{value!r} of type {type(value).__name__}"
    )


def _is_loss_scale_optimizer(value: object) -> bool:
    # By class name, not isinstance: no TensorFlow import, and a Keras 3 optimizer counts even
    # when `tf.keras` is tf_keras.
    return hasattr(value, "get_config") and any(
        cls.__name__ in _LSO_CLASS_NAMES for cls in type(value).__mro__
    )


def _serialized_loss_scale_optimizer_config(serialized: Mapping[str, Any]) -> dict[str, Any]:
    class_name = _class_identity(serialized)
    config = serialized.get("config")
    if not isinstance(config, Mapping):
        raise ConfigError(f"the serialized {class_name!r} has no 'config' dict: {config!r}")
    # Which LossScaleOptimizer class wrote it (native, compat_lso, the experimental class) is not
    # compared: old and new classes with equal settings are the same optimizer.
    is_lso_class = class_name.rpartition(">")[2] in _LSO_CLASS_NAMES
    if not is_lso_class and not {"inner_optimizer", "loss_scale"} & config.keys():
        raise ConfigError(
            f"expected a LossScaleOptimizer, but the serialized object is a {class_name!r}"
        )
    return dict(config)


def _class_identity(serialized: Mapping[str, Any]) -> str:
    # Keras 3 and Keras >= 2.13 write a registered class as class_name "Name" plus
    # registered_name "package>Name"; TF 2.1-2.12 wrote class_name "package>Name" alone.
    identity = serialized.get("registered_name") or serialized.get("class_name")
    if not isinstance(identity, str):
        raise ConfigError(
            f"a serialized Keras object needs a 'class_name' string: {dict(serialized)!r}"
        )
    return identity


def _canonical_optimizer(optimizer: object) -> dict[str, Any]:
    if not isinstance(optimizer, Mapping) and hasattr(optimizer, "get_config"):
        optimizer = {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}
    if not isinstance(optimizer, Mapping) or "class_name" not in optimizer:
        raise ConfigError(
            "inner_optimizer: expected a serialized optimizer {'class_name': ..., 'config': "
            f"{{...}}}}, but got {optimizer!r}"
        )
    canonical = _canonical_object(optimizer, ("inner_optimizer",))
    config = canonical["config"]
    if "lr" in config and "learning_rate" not in config:  # the TF 2.0-era spelling
        config["learning_rate"] = config.pop("lr")
    if config.get("use_ema") is not True:
        for key in _EMA_KEYS:
            config.pop(key, None)
    for key in _NOT_SETTINGS:
        config.pop(key, None)
    for key, off in _OFF_VALUES.items():
        if key in config and type(config[key]) is type(off) and config[key] == off:
            del config[key]
    return canonical


def _canonical_object(serialized: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """A serialized Keras object: its class and config, without where the class lives."""
    identity = _class_identity(serialized)
    raw_config = serialized.get("config") or {}
    if not isinstance(raw_config, Mapping):
        raise ConfigError(f"{render_path(path)}: 'config' must be a dict, but got {raw_config!r}")
    config = {
        key: _canonical_value(value, (*path, "config", key)) for key, value in raw_config.items()
    }
    if _is_generated_name(config.get("name"), identity):
        config.pop("name", None)
    # `module` says where the class lives, which differs between generations for the same class
    # (keras.optimizers.legacy, keras.optimizers.experimental, keras.optimizers).
    skipped = {"class_name", "registered_name", "module", "config"}
    rest = {
        key: _canonical_value(value, (*path, key))
        for key, value in serialized.items()
        if key not in skipped
    }
    return {"class_name": identity, "config": config, **rest}


def _is_generated_name(name: object, class_name: str) -> bool:
    """Whether Keras could have made up `name` for an unnamed object of class `class_name`.

    Keras 2 names an optimizer after its class (`SGD`); Keras 3 snake-cases the class and
    numbers repeats (`sgd`, `sgd_1`, `rm_sprop_2`). Compared without case, underscores and the
    repeat number, all of these are the class name; a name the user chose (`my_sgd`) is not.
    """
    if name is None:
        return True
    if not isinstance(name, str):
        return False

    def letters(text: str) -> str:
        return text.replace("_", "").lower()

    return letters(re.sub(r"_\d+$", "", name)) == letters(class_name.rpartition(">")[2])


def _canonical_value(value: object, path: Path) -> Any:
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        value = value.item()  # a NumPy scalar: Keras 2 legacy optimizers return them once built
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):  # ints stay exact
        return int(value)
    if isinstance(value, numbers.Real):
        return _canonical_float(float(value))
    if isinstance(value, Mapping):
        if "class_name" in value and "config" in value:
            return _canonical_object(value, path)
        return {key: _canonical_value(item, (*path, key)) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical_value(item, (*path, index)) for index, item in enumerate(value)]
    raise ConfigError(
        f"{render_path(path)}: cannot compare a {type(value).__name__} ({value!r}); configs "
        "hold dicts, lists, strings, numbers, booleans and None"
    )


def _canonical_float(as_float: float) -> int | float:
    """Floats that are the same float32 become one value: the shortest decimal, int if whole.

    Optimizers keep their hyperparameters and the loss scale in float32 variables, and Keras
    writes some of them back through float32 (`0.01` comes back as `0.009999999776482582`), so
    two numbers with the same float32 value are the same setting.
    """
    if not math.isfinite(as_float):
        return as_float
    try:
        target = _to_float32(as_float)
    except OverflowError:  # beyond float32's range: not a float32 setting, compared exactly
        return int(as_float) if as_float.is_integer() else as_float
    # 9 significant digits always round-trip a float32, so the loop returns.
    for digits in range(1, 10):
        candidate = float(f"{target:.{digits}g}")
        if _to_float32(candidate) == target:
            return int(candidate) if candidate.is_integer() else candidate
    raise AssertionError(f"unreachable: {target!r} did not round-trip through 9 digits")


def _to_float32(value: float) -> float:
    return float(_FLOAT32.unpack(_FLOAT32.pack(value))[0])


def render_path(path: Sequence[str | int]) -> str:
    """`("inner_optimizer", "config", "name")` -> `inner_optimizer.config.name`; ints as `[0]`."""
    rendered = ""
    for key in path:
        rendered += f"[{key}]" if isinstance(key, int) else (f".{key}" if rendered else str(key))
    return rendered
