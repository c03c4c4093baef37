"""The backend selection point finds the Keras generation behind tf.keras however it is reached."""

from __future__ import annotations

import subprocess
import sys

import tensorflow as tf

from compat_lso import _backend


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


def test_package_is_the_one_that_defines_tf_keras_classes():
    package = _backend.keras_package()
    assert package.__name__ in ("keras", "tf_keras")
    assert tf.keras.Model.__module__.startswith(package.__name__ + ".")
