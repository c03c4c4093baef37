"""A TF 2.3-era mixed precision training script, the kind compat-lso keeps running.

Written against the experimental API exactly as TF 2.2/2.3 documented it, and left unmodified:
`tensorflow.keras.mixed_precision.experimental` is gone from every TensorFlow since 2.9, so run
it as `python -m compat_lso run examples/legacy_project/train.py` (or after
`compat_lso.install()`), or migrate it with `compat-lso-migrate examples/legacy_project`.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

STEPS = 12
OVERFLOW_STEP = 6  # this batch holds a value that overflows float16: the step must be skipped


def make_batches(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    true_weights = rng.normal(size=(8, 1)).astype("float32")
    batches = []
    for step in range(STEPS):
        x = rng.normal(size=(32, 8)).astype("float32")
        y = x @ true_weights
        if step == OVERFLOW_STEP:
            x[0, 0] = 1e30  # inf once cast to float16
        batches.append((x, y))
    return batches


def build_model() -> tf.keras.Model:
    tf.keras.utils.set_random_seed(0)
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(8,)),
            tf.keras.layers.Dense(16, activation="relu", dtype="mixed_float16"),
            tf.keras.layers.Dense(1, dtype="float32"),
        ]
    )


def train(batches):
    """The TF 2.3 custom training loop: scale the loss, unscale the gradients, apply."""
    model = build_model()
    loss_scale = tf.mixed_precision.experimental.DynamicLossScale(
        initial_loss_scale=2**10, increment_period=4
    )
    optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05), loss_scale)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
        gradients = optimizer.get_unscaled_gradients(scaled_gradients)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    history = []
    for x, y in batches:
        loss = train_step(x, y)
        history.append((float(loss), float(optimizer.loss_scale())))
    return model, optimizer, history


def main() -> None:
    _, _, history = train(make_batches())
    for step, (loss, scale) in enumerate(history):
        print(f"step {step:2d}  loss {loss:12.4f}  loss scale {scale:8.0f}")


if __name__ == "__main__":
    main()
