"""The environment variables that ask for `install()` and for Keras 3's own class.

Read by `install()` (`keep_native=None`), by the start-up hook and by `python -m compat_lso`:
below all three, so that none of them imports another for a variable's name.
"""

from __future__ import annotations

import os

ENVIRONMENT_VARIABLE = "COMPAT_LSO_INSTALL"
# On Keras 3: leave `tf.keras.mixed_precision.LossScaleOptimizer` as Keras 3 has it.
KEEP_NATIVE_VARIABLE = "COMPAT_LSO_KEEP_NATIVE"


def _is_set(variable: str) -> bool:
    return os.environ.get(variable, "").strip().lower() not in ("", "0", "false", "no")


def requested_by_environment() -> bool:
    return _is_set(ENVIRONMENT_VARIABLE)


def keep_native_requested() -> bool:
    return _is_set(KEEP_NATIVE_VARIABLE)
