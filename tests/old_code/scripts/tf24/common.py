"""Data, starting weights and reporting shared by the TF 2.4-2.15 scripts; not what is compared.

Everything here is plain numpy, so TF 2.15 and TF 2.21 start from the same bits: data and
starting weights are small multiples of powers of two, put into the model with set_weights
(Keras 2 and Keras 3 initializers draw different numbers from the same seed).

The models take one input feature and train on batches of one sample, so that every float16
matrix product multiplies single numbers: TF 2.15's CPU MatMul accumulates float16 products in
float16, TF 2.16+'s in float32, and with more than one term per sum the two round differently
(see docs/old-code.md). With one term they agree bit for bit, as do Keras 2's and Keras 3's
bias gradients (a sum over the batch).
"""

import json
import math

import numpy as np


def regression_data(samples=32, seed=0):
    """x: multiples of 1/8 in [-2, 2], shape (samples, 1); y = x**2 / 2 - x / 4."""
    rng = np.random.default_rng(seed)
    x = (rng.integers(-16, 17, size=(samples, 1)) / 8).astype("float32")
    y = (x * x / 2 - x / 4).astype("float32")
    return x, y


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


def gradients_of(model, x, y):
    """The loss and its gradients, of the loss as it is (never scaled): taken in this module,
    which the codemod does not follow from a script (LSO021: gradients it cannot trace)."""
    import tensorflow as tf

    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    return loss, tape.gradient(loss, model.trainable_variables)
