"""The line LSO018 reports and the one it tells the user to write, on the installed Keras.

TensorFlow's mixed-precision guide prints `outputs.dtype.name` and `dense1.kernel.dtype.name`:
on Keras 3 both dtypes are strings and `.name` fails. The codemod writes
`getattr(x.dtype, "name", x.dtype)`, its help `tf.as_dtype(x.dtype).name`: both give the guide's
answers (worked out by hand: a mixed_float16 layer computes in float16 and keeps float32
variables) on every generation.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf
from packaging.version import Version

# Keras 3 gives KerasTensor.dtype and Variable.dtype as strings. TF 2.16 made Keras 3 its
# tf.keras; TF_USE_LEGACY_KERAS=1 keeps tf_keras (Keras 2) there.
LEGACY_KERAS = os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true")
KERAS_3 = Version(tf.__version__).release >= (2, 16) and not LEGACY_KERAS


@pytest.fixture
def mixed_float16():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    yield
    tf.keras.mixed_precision.set_global_policy("float32")


def test_the_reported_line_fails_on_keras3_and_the_fix_works_everywhere(mixed_float16):
    dense1 = tf.keras.layers.Dense(4)
    outputs = dense1(tf.keras.Input(shape=(784,)))
    assert tf.as_dtype(outputs.dtype).name == "float16"
    assert tf.as_dtype(dense1.kernel.dtype).name == "float32"
    assert getattr(outputs.dtype, "name", outputs.dtype) == "float16"
    assert getattr(dense1.kernel.dtype, "name", dense1.kernel.dtype) == "float32"
    if KERAS_3:
        with pytest.raises(AttributeError):
            outputs.dtype.name  # noqa: B018 - the guide's own line
    else:
        assert outputs.dtype.name == "float16"


def test_the_rewrite_keeps_the_name_of_tensorflow_and_numpy_dtypes():
    # What `x` may be besides a KerasTensor or a variable: their dtypes have `.name`, which the
    # rewrite reads as before. tf.as_dtype, the help line's fix, names NumPy's object dtype
    # "string" and refuses datetime64: not a rewrite for every `x`.
    for value, name in [
        (tf.constant([1.0], tf.float16), "float16"),
        (np.ones(3), "float64"),
        (np.array(["a", None], dtype=object), "object"),
        (np.array(["2026-11-28"], dtype="datetime64[D]"), "datetime64[D]"),
    ]:
        assert value.dtype.name == name
        assert getattr(value.dtype, "name", value.dtype) == name
    assert tf.as_dtype(np.dtype(object)).name == "string"
    with pytest.raises(TypeError):
        tf.as_dtype(np.dtype("datetime64[D]"))
