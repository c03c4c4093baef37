"""TF 2.4-2.15: the manual pattern in a public function that returns the unscaled gradients (other
modules may call it), applied by its caller in tf.function; an overflow.

--target keras3 unscales explicitly (Keras 2's values), scales back at every apply_gradients
of the module, and notes the return.
"""

import numpy as np
import tensorflow as tf

from common import number, regression_data, report, set_starting_weights, weights

model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(16, activation="relu", input_shape=(1,), dtype="mixed_float16"),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model)
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-5), initial_scale=2**10, dynamic_growth_steps=3
)


def compute_gradients(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    gradients = tape.gradient(scaled_loss, model.trainable_variables)
    return loss, optimizer.get_unscaled_gradients(gradients)


@tf.function
def train_step(x, y):
    loss, gradients = compute_gradients(x, y)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x, y = regression_data(samples=12)
x[5, 0] = 1e30  # inf in float16: the step on row 5 has non-finite gradients and is skipped
losses, scales, counters, iterations = [], [], [], []
for i in range(12):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    counters.append(int(optimizer.dynamic_counter.numpy()))
    iterations.append(int(optimizer.iterations.numpy()))

report(
    dynamic=optimizer.dynamic,
    losses=losses,
    scales=scales,
    dynamic_counters=counters,
    iterations=iterations,
    weights=weights(model),
    all_weights_finite=bool(all(np.isfinite(w).all() for w in model.get_weights())),
)
