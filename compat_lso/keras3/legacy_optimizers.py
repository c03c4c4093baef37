"""Keras 3 only: `tf.keras.optimizers.legacy.X` while `compat_lso.install()` is in effect.

TF 2.11-2.15 code kept its optimizers on `tf.keras.optimizers.legacy` (checkpoints, Horovod),
often inside `LossScaleOptimizer(...)`. Keras 3's `keras.optimizers.legacy` has Adagrad, Adam,
Ftrl, RMSprop and SGD only to raise ImportError when one is built (and no Adadelta, Adamax or
Nadam). While installed, each name of TF 2.15's legacy module builds Keras 3's optimizer of the
same update rule from TF 2.15's arguments (positional ones in TF 2.15's order, `lr`, `decay`,
`epsilon=None`), with a UserWarning at the user's line that says how close the numbers are
(`compat_lso/core/legacy_optimizers.py`: the table and what was measured). Where Keras 3 has no
class of the same rule (Nadam; RMSprop without momentum; Adagrad whose epsilon would move more than
the last bits), or an argument has no Keras 3 meaning, an ImportError (Keras 3's own class for this
name: code that falls back on it keeps doing so) or TypeError names the line, the argument, and
tf_keras with TF_USE_LEGACY_KERAS=1. A subclass of a legacy class (its own `_resource_apply_dense`
and the like) is refused the same way when built. `isinstance(opt, tf.keras.optimizers.legacy.Adam)`
is true for Keras 3's Adam.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import numbers
import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

import keras

from compat_lso.core import legacy_optimizers as table

# The module objects old code reaches the names through: `tf.keras.optimizers.legacy` (Keras 3's
# own) and the one `import tensorflow.keras.optimizers.legacy` gives (keras/_tf_keras/...).
_MODULES = (
    "keras.optimizers.legacy",
    "keras._tf_keras.keras.optimizers.legacy",
    "tensorflow.keras.optimizers.legacy",
)
_LIBRARY_PACKAGES = ("compat_lso", "keras", "tf_keras", "tensorflow")
_FIX = (
    "To keep TF 2.15's legacy optimizer, install tf_keras and set TF_USE_LEGACY_KERAS=1 (tf.keras "
    "is then Keras 2)"
)


class _LegacyName(type):
    """Building the installed name builds Keras 3's class; isinstance sees Keras 3's class."""

    keras3: type

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        site = user_site()
        if "keras3" not in cls.__dict__:  # a subclass that old code derived from the name
            raise ImportError(
                f"{site}: {cls.__name__} subclasses tf.keras.optimizers.legacy."
                f"{_legacy_base(cls)}, which Keras 3 does not have, and Keras 3's optimizers "
                f"have no OptimizerV2 methods to override. {_FIX}"
            )
        return build(cls.__name__, args, kwargs, site)

    def __instancecheck__(cls, instance: Any) -> bool:
        if "keras3" in cls.__dict__:
            return isinstance(instance, cls.keras3)
        return bool(super().__instancecheck__(instance))

    def __subclasscheck__(cls, subclass: type) -> bool:
        if "keras3" in cls.__dict__:
            return issubclass(subclass, cls.keras3)
        return bool(super().__subclasscheck__(subclass))


def _legacy_base(cls: type) -> str:
    return next(base.__name__ for base in cls.__mro__ if "keras3" in base.__dict__)


def legacy_class(name: str) -> type:
    """The installed `tf.keras.optimizers.legacy.<name>`."""
    return _LegacyName(
        name,
        (),
        {
            "keras3": getattr(keras.optimizers, name),
            "__module__": "tensorflow.keras.optimizers.legacy",
            "__doc__": f"TF 2.15's legacy {name}, built as Keras 3's {name} by compat_lso.",
        },
    )


def build(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], site: str) -> Any:
    """TF 2.15's `tf.keras.optimizers.legacy.<name>(*args, **kwargs)` as Keras 3's class."""
    parameters, closeness = table.LEGACY_OPTIMIZERS[name]
    call = f"{site}: tf.keras.optimizers.legacy.{name}"
    if closeness == table.NOT_SAME:
        _refuse(call, name)
    if len(args) > len(parameters):
        raise TypeError(
            f"{call} takes at most {len(parameters)} positional arguments "
            f"({', '.join(parameters)}), {len(args)} given"
        )
    arguments = dict(zip(parameters, args, strict=False))
    for key, value in kwargs.items():
        if key in arguments:
            raise TypeError(f"{call} got multiple values for argument {key!r}")
        if key not in parameters and key not in table.LEGACY_KEYWORDS:
            raise TypeError(
                f"{call}: unexpected keyword argument {key!r} (TF 2.15's legacy {name} takes "
                f"{', '.join(parameters + table.LEGACY_KEYWORDS)}). {_FIX}"
            )
        arguments[key] = value
    if "lr" in arguments:  # TF 2.15: kwargs.get("lr", learning_rate), lr wins
        arguments["learning_rate"] = arguments.pop("lr")
    if "epsilon" in parameters and _is_zero_or_none(arguments.get("epsilon", 1.0)):
        # TF 2.15: `epsilon or backend_config.epsilon()`; Keras 3 would use 0 as given.
        arguments["epsilon"] = keras.config.epsilon()
    _check_rule(call, name, arguments)
    _decay_as_schedule(call, name, arguments)
    optimizer = getattr(keras.optimizers, name)(**arguments)
    warnings.warn(
        f"{call} is built as Keras 3's keras.optimizers.{name} (Keras 3 has no legacy "
        f"optimizers): {table.DIFFERS[closeness]}. {_FIX}",
        UserWarning,
        stacklevel=_stacklevel(),
    )
    return optimizer


def _check_rule(call: str, name: str, arguments: dict[str, Any]) -> None:
    defaults = table.DEFAULTS.get(name, {})
    if name == "RMSprop":
        momentum = arguments.get("momentum", defaults["momentum"])
        if not _number(momentum) or not momentum > 0:
            _refuse(call, name, momentum)
    elif name == "Adagrad":
        initial = arguments.get("initial_accumulator_value", defaults["initial_accumulator_value"])
        epsilon = arguments.get("epsilon", defaults["epsilon"])
        if not (_number(initial) and _number(epsilon) and initial > 0) or (
            epsilon / math.sqrt(initial) > table.ADAGRAD_LAST_BITS
        ):
            _refuse(call, name, initial)


def _refuse(call: str, name: str, value: Any = None) -> None:
    argument, why = table.NOT_SAME_BECAUSE[name]
    given = "" if argument == name else f" ({argument}={value!r})"
    raise ImportError(
        f"{call}{given}: no Keras 3 optimizer has TF 2.15's update rule: {why}. {_FIX}"
    )


def _decay_as_schedule(call: str, name: str, arguments: dict[str, Any]) -> None:
    """TF 2.15's `decay`: learning_rate / (1 + decay * iterations), which Keras 3's
    InverseTimeDecay(learning_rate, decay_steps=1, decay_rate=decay) computes from the same
    `iterations` (Keras 3 itself ignores `decay` with a warning)."""
    decay = arguments.pop("decay", 0.0)
    if _number(decay) and decay == 0:
        return
    rate = arguments.get("learning_rate", table.DEFAULT_LEARNING_RATE.get(name, 0.001))
    if not (_number(decay) and _number(rate)):
        raise TypeError(
            f"{call}(decay={decay!r}, learning_rate={rate!r}): Keras 3 has no `decay`; it is "
            "kept as keras.optimizers.schedules.InverseTimeDecay only for a number decay and "
            "learning rate. Pass that schedule as learning_rate instead, or: " + _FIX
        )
    arguments["learning_rate"] = keras.optimizers.schedules.InverseTimeDecay(
        rate, decay_steps=1, decay_rate=decay
    )


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_zero_or_none(value: Any) -> bool:
    return value is None or (_number(value) and value == 0)


def user_site() -> str:
    """`file:line` of the innermost caller outside compat_lso, Keras and TensorFlow."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and _is_library(frame):
        frame = frame.f_back
    if frame is None:
        return "<unknown>:0"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _stacklevel() -> int:
    frame: types.FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and _is_library(frame):
        frame = frame.f_back
        level += 1
    return level


def _is_library(frame: types.FrameType) -> bool:
    return str(frame.f_globals.get("__name__", "")).partition(".")[0] in _LIBRARY_PACKAGES


def install() -> list[Callable[[], None]]:
    """Put the installed names in Keras 3's legacy modules; returns what undoes it."""
    undo: list[Callable[[], None]] = []
    modules = []
    for module_name in _MODULES:
        with contextlib.suppress(ModuleNotFoundError):
            modules.append(importlib.import_module(module_name))
    classes = {name: legacy_class(name) for name in table.LEGACY_OPTIMIZERS}
    for module in {id(m): m for m in modules}.values():
        for name, value in classes.items():
            undo.append(_replace(module, name, value))
    return undo


def _replace(module: types.ModuleType, name: str, value: Any) -> Callable[[], None]:
    missing = object()
    original = module.__dict__.get(name, missing)
    setattr(module, name, value)

    def undo() -> None:
        if module.__dict__.get(name) is value:
            if original is missing:
                delattr(module, name)
            else:
                setattr(module, name, original)

    return undo
