"""TF 2.4-2.15: apply_gradients given gradients the codemod cannot trace (a parameter, filled by
another module's function), in tf.function, before the optimizer is built; an overflow.

Keras 2's apply_gradients applies them as given (checks them, updates the scale); --target
keras3 scales each back by `optimizer.scale_loss(1.0)`, which Keras 3's division takes back.
"""

import numpy as np
import tensorflow as tf

from common import gradients_of, number, regression_data, report, set_starting_weights, weights

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


def apply(gradients):
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))


@tf.function
def train_step(x, y):
    loss, gradients = gradients_of(model, x, y)
    apply(gradients)
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
