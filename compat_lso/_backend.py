"""The one place that decides which Keras generation `tf.keras` is.

Everything that differs between Keras 2 and Keras 3 lives in `compat_lso/keras2/` or
`compat_lso/keras3/`; this module only picks one of them. Which package and version are behind
`tf.keras` is read in `compat_lso.core.keras_version` (re-exported here), below both generations.

The generation's modules are imported inside the functions, not at the top: `import compat_lso`
must not import TensorFlow, and only the running generation's modules can be imported at all
(each imports its own Keras at import time).
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

from compat_lso.core.keras_version import KERAS_3, keras_package, keras_version

__all__ = ["KERAS_3", "implementation", "install_time_names", "keras_package", "keras_version"]


@functools.cache
def implementation() -> ModuleType:
    """The module that holds this generation's `LossScaleOptimizer`."""
    # Keras 3 (keras-team/keras#18467, TF 2.16) replaced the optimizer stack: no OptimizerV2,
    # no `get_scaled_loss`, a loss scale optimizer with a different update rule.
    if keras_version() >= KERAS_3:
        from compat_lso.keras3 import optimizer as keras3_optimizer

        return keras3_optimizer
    from compat_lso.keras2 import optimizer as keras2_optimizer

    return keras2_optimizer


def install_time_names() -> Any:
    """What `compat_lso.install()` puts behind the generation's own `LossScaleOptimizer` names.

    None on Keras 2: its native class already has TF 2.4's meaning. On Keras 3, the module
    `compat_lso.keras3.installed` (see there).
    """
    if keras_version() >= KERAS_3:
        from compat_lso.keras3 import installed

        return installed
    return None
