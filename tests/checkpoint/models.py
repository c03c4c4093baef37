"""The model the checkpoint fixtures were written with, built the same way on every backend."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

INPUT_SHAPE = (3,)


def build_model() -> tf.keras.Model:
    """Dense, BatchNormalization (non-trainable weights too), Dense: small, and every kind of weight."""
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=INPUT_SHAPE),
            tf.keras.layers.Dense(4, activation="relu"),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Dense(1),
        ]
    )


def training_data() -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(-1.0, 1.0, 8 * INPUT_SHAPE[0], dtype="float32").reshape(8, *INPUT_SHAPE)
    y = (x.sum(axis=1, keepdims=True) * 0.5).astype("float32")
    return x, y
