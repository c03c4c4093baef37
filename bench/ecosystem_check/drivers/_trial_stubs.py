"""Shared by the trial drivers: where the snapshot is, and empty stand-ins for the packages a
snapshot imports at module level but the driven code never calls (plotting, datasets, torch).

Kept out of the snapshot's own code: a driver calls `root()` first, then `stub_missing(...)`.
Only packages that are not installed are stood in for; TensorFlow and Keras never are.
"""

from __future__ import annotations

import importlib
import os
import sys
import types


class _Stub(types.ModuleType):
    """A module whose every attribute is another stub: `from pkg import name` succeeds."""

    def __getattr__(self, name: str) -> _Stub:
        if name.startswith("__"):
            raise AttributeError(name)
        child = _Stub(f"{self.__name__}.{name}")
        setattr(self, name, child)
        return child

    def __call__(self, *args: object, **kwargs: object) -> _Stub:
        return self


def root() -> str:
    """The snapshot's folder: argv[1], else $TRIAL_ROOT, else the driver's own folder (where
    trial.py copies it, so that verify's before run imports the old copy beside it)."""
    if len(sys.argv) > 1:
        folder = sys.argv[1]
    else:
        folder = os.environ.get("TRIAL_ROOT") or os.path.dirname(os.path.abspath(__file__))
    folder = os.path.abspath(folder)
    sys.path.insert(0, folder)
    return folder


def stub_missing(*names: str) -> list[str]:
    """Stand in for each of `names` (dotted too) that cannot be imported; returns those."""
    stood = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):
                dotted = ".".join(parts[:depth])
                if dotted not in sys.modules:
                    sys.modules[dotted] = _Stub(dotted)
                    if depth > 1:
                        setattr(
                            sys.modules[".".join(parts[: depth - 1])],
                            parts[depth - 1],
                            sys.modules[dotted],
                        )
            stood.append(name)
    return stood
