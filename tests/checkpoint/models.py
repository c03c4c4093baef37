"""The models the checkpoint fixtures were written with, built the same way on every backend."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

INPUT_SHAPE = (3,)
SEQUENCE_SHAPE = (2, 3)


def build_model() -> tf.keras.Model:
    """Dense, BatchNormalization (non-trainable weights too), Dense: small, every kind of weight."""
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=INPUT_SHAPE),
            tf.keras.layers.Dense(4, activation="relu"),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Dense(1),
        ]
    )


def build_nested_model() -> tf.keras.Model:
    """Functional: an LSTM (weights under `cell/`), then a Sequential nested as one layer."""
    inputs = tf.keras.Input(shape=SEQUENCE_SHAPE)
    features = tf.keras.layers.LSTM(4)(inputs)
    head = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(4,)),
            tf.keras.layers.Dense(3, activation="relu"),
            tf.keras.layers.Dense(1),
        ]
    )
    return tf.keras.Model(inputs, head(features))


class Subclassed(tf.keras.Model):
    """A subclassed model: checkpoints name its layers by attribute (`hidden/kernel`)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = tf.keras.layers.Dense(4, activation="relu")
        self.head = tf.keras.layers.Dense(1)

    def call(self, inputs):
        return self.head(self.hidden(inputs))


def build_subclassed_model() -> tf.keras.Model:
    model = Subclassed()
    model(np.zeros((1, *INPUT_SHAPE), "float32"))  # create the weights
    return model


MODELS = {
    "dense_bn_dense": build_model,
    "lstm_nested_sequential": build_nested_model,
    "subclassed": build_subclassed_model,
}


def training_data(model_name: str = "dense_bn_dense") -> tuple[np.ndarray, np.ndarray]:
    shape = SEQUENCE_SHAPE if model_name == "lstm_nested_sequential" else INPUT_SHAPE
    size = 8 * int(np.prod(shape))
    x = np.linspace(-1.0, 1.0, size, dtype="float32").reshape(8, *shape)
    y = (x.reshape(8, -1).sum(axis=1, keepdims=True) * 0.5).astype("float32")
    return x, y
