"""Which Keras package, and which version of it, is behind `tf.keras`.

Read by the selection point (`compat_lso._backend`) and by each generation's own version gates,
so it sits below both. The shim follows `tf.keras` (what user code written for the old API
calls), not the standalone `keras` package: with `TF_USE_LEGACY_KERAS=1` on TF 2.16+, `tf.keras`
is tf_keras (Keras 2) even though `import keras` gives Keras 3.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from packaging.version import Version

# TF 2.16 made Keras 3 the default `tf.keras`. Keras 3's `tf.keras` exports `__version__`;
# Keras 2's (`keras.api._v2.keras`, `tf_keras.api._v2.keras`) does not, so the version of the
# package behind it is read from the package itself.
KERAS_3 = Version("3")


@functools.cache
def keras_package() -> ModuleType:
    """The top-level package behind `tf.keras`: `keras` (Keras 2 or 3) or `tf_keras`."""
    import tensorflow as tf

    # Asked of a class, not of `tf.keras` itself: once anything imports a `tensorflow.keras.*`
    # submodule (`from tensorflow.keras import layers`), TensorFlow rebinds `tf.keras` to a
    # module named "tensorflow.keras", while classes keep the module they were defined in.
    return importlib.import_module(tf.keras.Model.__module__.partition(".")[0])


@functools.cache
def keras_version() -> Version:
    return Version(keras_package().__version__)
