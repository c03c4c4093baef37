"""Keras 3 only: Keras 2's `lr` on every Keras 3 optimizer while `compat_lso.install()` is on.

Keras 2 code spells the learning rate `lr` too: `tf.keras.optimizers.Adam(lr=1e-3)` in the
constructor (and in a config that `from_config`, `get` or `deserialize` builds), and `opt.lr`
read or assigned (`K.set_value(opt.lr, x)` callbacks). Keras 3 refuses the argument
("Argument(s) not recognized: {'lr': ...}"), has no attribute to read, and keeps `opt.lr = x` as
an attribute that nothing reads, so the learning rate stays as it was, silently.

While installed, every Keras 3 optimizer class (what `keras.optimizers.Optimizer` is the base of:
Adam, SGD, ..., the loss scale optimizers and user subclasses) takes `lr` as Keras 2 did:

- `lr=` is the learning rate, and wins over `learning_rate=` (TF 2.4-2.10's optimizers and TF
  2.11-2.15's `tf.keras.optimizers.legacy` ones: `kwargs.get("lr", learning_rate)`). TF
  2.11-2.15's default optimizers instead dropped it with a logged warning and kept their default
  rate; code written with `lr=` meant the rate it gives, so it is used, and the
  DeprecationWarning at the user's line says what TF 2.11-2.15 did;
- `opt.lr` reads and assigns `learning_rate` (read: the tf.Variable behind it, as Keras 2's
  was), with a DeprecationWarning where the user's code reads or writes it (not where Keras or
  TensorFlow walk an optimizer's attributes).

Code that never says `lr` sees no change. The shim's loss scale optimizer has its own `lr`
(`keras2_surface.py`), which this leaves as it is. `uninstall()` removes both.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from compat_lso.core.deprecation import warn_deprecated
from compat_lso.keras3.legacy_optimizers import user_site

_LIBRARY_PACKAGES = ("compat_lso", "keras", "tf_keras", "tensorflow")

ARGUMENT = (
    "{site}: {name}(lr={value!r}): `lr` is Keras 2's name for `learning_rate`, which Keras 3 "
    "refuses; compat_lso uses it as the learning rate, as TF 2.4-2.10's optimizers and TF "
    "2.11-2.15's legacy ones did (TF 2.11-2.15's default optimizers ignored it and kept "
    "learning_rate={default!r}). Replace it with: {name}(learning_rate={value!r})"
)
ATTRIBUTE = (
    "{site}: {name}.lr is Keras 2's name for `learning_rate`, which Keras 3 optimizers do not "
    "have; compat_lso {verb} the learning rate. Replace it with: optimizer.learning_rate"
)


def _init_taking_lr(self: Any, *args: Any, **kwargs: Any) -> None:
    """Keras 3's optimizer constructor, taking Keras 2's `lr=` as the learning rate."""
    if "lr" in kwargs:
        value = kwargs.pop("lr")
        name = type(self).__name__
        if args:  # a subclass that passes the rate on positionally: Keras 3's first parameter
            default, args = args[0], (value, *args[1:])
        else:
            default = kwargs.get("learning_rate")
            kwargs["learning_rate"] = value
        warn_deprecated(ARGUMENT.format(site=user_site(), name=name, value=value, default=default))
    _keras3_init(self, *args, **kwargs)


def _get_lr(self: Any) -> Any:
    _warn_if_user_code(self, "reads", ("__getattribute__", "__getattr__"))
    rate = self.learning_rate
    # Keras 2's `lr` was a tf.Variable; Keras 3's variable is backed by one on TensorFlow.
    backing = getattr(rate, "value", None)
    return backing if isinstance(backing, tf.Variable) else rate


def _set_lr(self: Any, value: Any) -> None:
    _warn_if_user_code(self, "sets", ("__setattr__",))
    self.learning_rate = value


def _warn_if_user_code(optimizer: Any, verb: str, hooks: tuple[str, ...]) -> None:
    # The code that read or wrote `opt.lr`: two frames up (one up is the property's function),
    # past Keras's and TensorFlow's `__setattr__`, through which an assignment reaches the setter
    # (and which reads the attribute itself first: a library's read, not the user's).
    caller = sys._getframe(2)
    while _is_library(caller) and caller.f_code.co_name in hooks and caller.f_back:
        caller = caller.f_back
    if not _is_library(caller):
        site = f"{caller.f_code.co_filename}:{caller.f_lineno}"
        warn_deprecated(ATTRIBUTE.format(site=site, name=type(optimizer).__name__, verb=verb))


def _is_library(frame: Any) -> bool:
    return str(frame.f_globals.get("__name__", "")).partition(".")[0] in _LIBRARY_PACKAGES


_BASE = keras.optimizers.Optimizer
_keras3_init = _BASE.__init__


def install() -> list[Callable[[], None]]:
    """Give every Keras 3 optimizer Keras 2's `lr`; returns what undoes it."""
    if _BASE.__dict__.get("__init__") is _init_taking_lr:
        return []
    missing = object()
    replaced = {"__init__": _init_taking_lr, "lr": property(_get_lr, _set_lr)}
    originals = {name: _BASE.__dict__.get(name, missing) for name in replaced}
    for name, value in replaced.items():
        setattr(_BASE, name, value)

    def undo() -> None:
        for name, original in originals.items():
            if original is missing:
                delattr(_BASE, name)
            else:
                setattr(_BASE, name, original)

    return [undo]
