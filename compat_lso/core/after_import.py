"""Call back right after a module is imported, without importing it early.

`AfterImport` is a meta path finder that finds nothing itself: for a module it watches it asks the
finders after it for the module's own spec, and hands that back with a loader that runs the
module, then the callback. `installer/startup.py` installs the names right after TensorFlow's
import with it; `trace/hooks.py` wraps the loss scale optimizer classes of every Keras as their
modules are imported. One finder per module: two watching the same name would each ask the
other for its spec, without end.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable, Collection, Sequence
from typing import Any


class AfterImport(importlib.abc.MetaPathFinder):
    """Calls `callback(module)` right after each module in `names` ran; `once`: only the first,
    and the finder leaves `sys.meta_path` before the callback runs."""

    def __init__(
        self,
        names: Collection[str],
        callback: Callable[[types.ModuleType], None],
        *,
        once: bool = False,
    ) -> None:
        self.names = frozenset(names)
        self.callback = callback
        self.once = once

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _CallingBack(spec.loader, self)
                return spec
        return None


class _CallingBack(importlib.abc.Loader):
    def __init__(self, loader: Any, finder: AfterImport) -> None:
        self._loader = loader
        self._finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        module: types.ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        if self._finder.once and self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        self._finder.callback(module)

    def __getattr__(self, name: str) -> Any:
        # Resource readers and the like stay the module's own loader's.
        return getattr(self._loader, name)
