"""Run `compat_lso.install()` right after TensorFlow is imported, without importing it early.

Used by `python -m compat_lso run` and by the start-up hook that `python -m compat_lso
autoinstall enable` writes (honoured when COMPAT_LSO_INSTALL=1). Importing this module imports
neither TensorFlow nor Keras (`installer/names.py` imports them only when it installs).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable

from compat_lso.core.after_import import AfterImport
from compat_lso.installer import names as install_module
from compat_lso.installer.environment import (
    ENVIRONMENT_VARIABLE,
    KEEP_NATIVE_VARIABLE,
    keep_native_requested,
    requested_by_environment,
)

__all__ = [
    "ENVIRONMENT_VARIABLE",
    "KEEP_NATIVE_VARIABLE",
    "install_when_tensorflow_is_imported",
    "keep_native_requested",
    "requested_by_environment",
    "when_tensorflow_is_imported",
]

# What runs right after TensorFlow's import, in order. One finder serves them all: two finders
# for "tensorflow" would each ask the other for its spec, without end.
_callbacks: list[Callable[[], None]] = []


def install_when_tensorflow_is_imported() -> None:
    """Install now if TensorFlow is already imported, else right after its import."""
    when_tensorflow_is_imported(_install)


def when_tensorflow_is_imported(callback: Callable[[], None]) -> None:
    """Call `callback` now if TensorFlow is already imported, else right after its import (once,
    however often it is asked for)."""
    if "tensorflow" in sys.modules:
        callback()
        return
    if callback not in _callbacks:
        _callbacks.append(callback)
    if not any(getattr(finder, "callback", None) is _after_tensorflow for finder in sys.meta_path):
        sys.meta_path.insert(0, AfterImport({"tensorflow"}, _after_tensorflow, once=True))


def _install() -> None:
    install_module.install()


def _after_tensorflow(module: types.ModuleType) -> None:
    while _callbacks:
        _callbacks.pop(0)()
