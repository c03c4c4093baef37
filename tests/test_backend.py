"""The backend selection point finds the Keras generation behind tf.keras however it is reached."""

from __future__ import annotations

import os
import subprocess
import sys

import tensorflow as tf
from packaging.version import Version

from compat_lso import _backend

# Worked out from the installed versions, independently of _backend: TF 2.16 made Keras 3 its
# tf.keras; TF_USE_LEGACY_KERAS=1 keeps tf_keras (Keras 2) there.
LEGACY_KERAS = os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true")
KERAS_3 = Version(tf.__version__).release >= (2, 16) and not LEGACY_KERAS
EXPECTED_PACKAGE = "keras" if KERAS_3 or Version(tf.__version__).release < (2, 16) else "tf_keras"
EXPECTED_IMPLEMENTATION = (
    "compat_lso.keras3.optimizer" if KERAS_3 else "compat_lso.keras2.optimizer"
)


def test_selection_survives_tensorflow_rebinding_tf_keras():
    # `from tensorflow.keras import ...` makes TensorFlow rebind `tf.keras` to a module named
    # "tensorflow.keras"; the shim must still find keras / tf_keras, in a fresh process where
    # that import comes before compat_lso is first used.
    code = (
        "from tensorflow.keras import layers\n"
        "import tensorflow as tf, compat_lso\n"
        "print(tf.keras.__name__, compat_lso.LossScaleOptimizer.__module__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    keras_name, implementation = result.stdout.split()
    assert keras_name == "tensorflow.keras"
    assert implementation == _backend.implementation().__name__
    assert implementation == EXPECTED_IMPLEMENTATION


def test_package_is_the_one_that_defines_tf_keras_classes():
    package = _backend.keras_package()
    assert package.__name__ == EXPECTED_PACKAGE
    assert tf.keras.Model.__module__.startswith(package.__name__ + ".")
    assert _backend.implementation().__name__ == EXPECTED_IMPLEMENTATION
