"""The line LSO018 reports and the one it tells the user to write, on the installed Keras.

TensorFlow's mixed-precision guide prints `outputs.dtype.name` and `dense1.kernel.dtype.name`:
on Keras 3 both dtypes are strings and `.name` fails; `tf.as_dtype(x.dtype).name` gives the
guide's answers (worked out by hand: a mixed_float16 layer computes in float16 and keeps float32
variables) on every generation.
"""

from __future__ import annotations

import os

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
    if KERAS_3:
        with pytest.raises(AttributeError):
            outputs.dtype.name  # noqa: B018 - the guide's own line
    else:
        assert outputs.dtype.name == "float16"
