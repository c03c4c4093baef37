"""Data, models, starting weights and reporting shared by the pattern scripts; not a pattern.

Plain numpy, so TF 2.15 and TF 2.21 start from the same bits: inputs are multiples of 1/8,
starting weights multiples of 1/16, put into each model with set_weights. Batches hold one
sample of one feature, so every float16 matrix product multiplies single numbers (TF 2.15's
CPU kernels accumulate float16 sums in float16, TF 2.16+'s in float32; with one term the two
agree bit for bit; see docs/old-code.md).
"""

import json
import math

import numpy as np
import tensorflow as tf


def data(steps=4, inf_at=None, seed=0):
    """x: multiples of 1/8 in [-2, 2], shape (steps, 1); y = x**2 / 2 - x / 4.

    `inf_at`: that row's x is 1e30, inf in float16: the step on it has non-finite gradients.
    """
    rng = np.random.default_rng(seed)
    x = (rng.integers(-16, 17, size=(steps, 1)) / 8).astype("float32")
    y = (x * x / 2 - x / 4).astype("float32")
    if inf_at is not None:
        x[inf_at, 0] = 1e30
    return x, y


def small_model(units=4, seed=1):
    """Dense(units, relu) in mixed_float16, then Dense(1) in float32, starting weights set."""
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(units, activation="relu", input_shape=(1,), dtype="mixed_float16"),
            tf.keras.layers.Dense(1, dtype="float32"),
        ]
    )
    set_starting_weights(model, seed)
    return model


def set_starting_weights(model, seed=1):
    rng = np.random.default_rng(seed)
    model.set_weights(
        [(rng.integers(-8, 9, size=w.shape) / 16).astype("float32") for w in model.get_weights()]
    )


def weights(model):
    return [np.asarray(w, dtype="float32").ravel().tolist() for w in model.get_weights()]


def number(value):
    """A float for JSON; inf and nan as strings, which JSON has no spelling for."""
    value = float(value)
    return value if math.isfinite(value) else repr(value)


def report(**values):
    """The last line a script prints: what the recorder and the tests read."""
    print("RESULT " + json.dumps(_clean(values), sort_keys=True))


def _clean(value):
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item) for item in value]
    if isinstance(value, float):
        return number(value)
    return value


def overflowing_data(steps=12, seed=0, offset=64.0):
    """x as in `data`, y = x**2 / 2 - x / 4 + offset: a model starting near 0 gets a loss
    gradient of about 2 * offset, which times the default initial scale 2**15 overflows float16
    in the float16 layer's backward pass, so the first steps of a dynamic scale are skipped
    while it halves (six of them at offset 64 with these models' weights)."""
    x, y = data(steps, seed=seed)
    return x, (y + offset).astype("float32")
