"""Facts about the Keras generation under test, for skipping what a generation lacks."""

from __future__ import annotations

import tensorflow as tf

from compat_lso import _backend

KERAS_GENERATION = 3 if _backend.keras_version() >= _backend.KERAS_3 else 2
IS_KERAS_2 = KERAS_GENERATION == 2
IS_KERAS_3 = KERAS_GENERATION == 3
# Keras 2 keeps the OptimizerV2 line under `optimizers.legacy`; Keras 3 raises on access.
HAS_LEGACY_OPTIMIZERS = IS_KERAS_2
NATIVE_LSO = tf.keras.mixed_precision.LossScaleOptimizer
