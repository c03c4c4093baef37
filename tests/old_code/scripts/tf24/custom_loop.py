"""TF 2.4-2.15: a custom loop in tf.function with the manual pattern, dynamic scaling, an overflow.

Reads `loss_scale` inside the traced step and `dynamic_counter` after each step.
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


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    scale_used = optimizer.loss_scale
    gradients = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, model.trainable_variables))
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss, scale_used


x, y = regression_data(samples=24)
x[10, 0] = 1e30  # inf in float16: the step on row 10 has non-finite gradients and is skipped
losses, scales_used, scales, counters, iterations = [], [], [], [], []
for i in range(24):
    loss, scale_used = train_step(x[i : i + 1], y[i : i + 1])
    losses.append(number(loss))
    scales_used.append(float(scale_used))
    scales.append(float(optimizer.loss_scale))
    counters.append(int(optimizer.dynamic_counter.numpy()))
    iterations.append(int(optimizer.iterations.numpy()))

report(
    dynamic=optimizer.dynamic,
    losses=losses,
    scales_used=scales_used,
    scales=scales,
    dynamic_counters=counters,
    iterations=iterations,
    weights=weights(model),
    all_weights_finite=bool(all(np.isfinite(w).all() for w in model.get_weights())),
)
