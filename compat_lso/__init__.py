"""compat-lso: the TF 2.4 loss-scale-optimizer API on every supported TensorFlow/Keras generation.

`import compat_lso` is cheap: TensorFlow and Keras are imported when a class is first used, and
the Keras generation behind `tf.keras` is chosen then (see `compat_lso._backend`).

The top-level modules are the public paths; the code is in folders: `keras2/`, `keras3/` (each
generation's class, and on Keras 3 what `install()` puts in place), `legacy/` (the TF 2.1-2.3
API behind `experimental`), `installer/`, `checkpoint/`, `testing/` (CI helpers) and `core/`
(what they all share). docs/shim.md has the table.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = [
    "LossScaleOptimizer",
    "experimental",
    "install",
    "uninstall",
    "load_legacy_checkpoint",
    "__version__",
]

if TYPE_CHECKING:
    from compat_lso import experimental
    from compat_lso.checkpoint import load_legacy_checkpoint
    from compat_lso.keras2.optimizer import LossScaleOptimizer


def __getattr__(name: str) -> Any:
    if name == "LossScaleOptimizer":
        from compat_lso import _backend

        value = _backend.implementation().LossScaleOptimizer
    elif name == "load_legacy_checkpoint":
        value = importlib.import_module("compat_lso.checkpoint").load_legacy_checkpoint
    elif name == "experimental":
        value = importlib.import_module("compat_lso.experimental")
    elif name in ("install", "uninstall"):
        value = getattr(importlib.import_module("compat_lso.installer.names"), name)
    else:
        raise AttributeError(f"module 'compat_lso' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
