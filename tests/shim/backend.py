"""Facts about the Keras generation under test, for skipping what a generation lacks."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from packaging.version import Version

from compat_lso import _backend

KERAS_GENERATION = 3 if _backend.keras_version() >= _backend.KERAS_3 else 2
IS_KERAS_2 = KERAS_GENERATION == 2
IS_KERAS_3 = KERAS_GENERATION == 3
# Keras 2 keeps the OptimizerV2 line under `optimizers.legacy`; Keras 3 raises on access.
HAS_LEGACY_OPTIMIZERS = IS_KERAS_2
NATIVE_LSO = tf.keras.mixed_precision.LossScaleOptimizer

# Keras 3.0-3.1.0 optimizers are no TensorFlow trackables: tf.train.Checkpoint refuses every one,
# Keras's own included (keras-team/keras@c1dfba3227, Keras 3.1.1).
CHECKPOINT_REFUSES_OPTIMIZERS = pytest.mark.xfail(
    IS_KERAS_3 and _backend.keras_version() < Version("3.1.1"),
    raises=ValueError,
    strict=True,
    reason="Keras 3.0-3.1.0: tf.train.Checkpoint takes no Keras optimizer",
)


def number(value: object) -> float:
    """A scalar variable or tensor as a Python float: Keras 3.0-3.4's variables refuse float()."""
    return float(np.asarray(value.numpy() if hasattr(value, "numpy") else value))
