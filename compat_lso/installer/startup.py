"""Run `compat_lso.install()` right after TensorFlow is imported, without importing it early.

Used by `python -m compat_lso run` and by the start-up hook that `python -m compat_lso
autoinstall enable` writes (honoured when COMPAT_LSO_INSTALL=1). Importing this module imports
neither TensorFlow nor Keras (`installer/names.py` imports them only when it installs).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

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
    if not any(isinstance(finder, _InstallAfterTensorFlow) for finder in sys.meta_path):
        sys.meta_path.insert(0, _InstallAfterTensorFlow())


def _install() -> None:
    install_module.install()


class _InstallAfterTensorFlow(importlib.abc.MetaPathFinder):
    """Finds nothing itself: hands TensorFlow's own spec back with a loader that installs after."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "tensorflow":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _InstallingLoader(spec.loader, self)
                return spec
        return None


class _InstallingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, finder: _InstallAfterTensorFlow) -> None:
        self._loader = loader
        self._finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        module: types.ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        while _callbacks:
            _callbacks.pop(0)()

    def __getattr__(self, name: str) -> Any:
        # Resource readers and the like stay TensorFlow's loader's.
        return getattr(self._loader, name)
