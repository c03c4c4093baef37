"""TF 2.2 style: a GradientTape loop in tf.function with get_scaled_loss, and a float16 overflow."""

import tensorflow as tf

from common import regression_data, report, weights_digest

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(16, activation="relu", input_shape=(8,), dtype="mixed_float16"),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
loss_scale = tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=1024, increment_period=3)
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05), loss_scale)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    gradients = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, model.trainable_variables))
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x, y = regression_data(overflow_at=40)
scales = []
for start in range(0, 64, 8):
    train_step(x[start : start + 8], y[start : start + 8])
    scales.append(float(optimizer.loss_scale()))

report(scales=scales, iterations=int(optimizer.iterations.numpy()), weights=weights_digest(model))
