"""TF 2.4-2.15: a fixed loss scale, the manual pattern in tf.function, loss_scale read as a tensor."""

import tensorflow as tf

from common import regression_data, report, set_starting_weights, weights

model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(16, activation="relu", input_shape=(1,), dtype="mixed_float16"),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model)
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-5), dynamic=False, initial_scale=128
)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss, scaled_loss, optimizer.loss_scale


x, y = regression_data(samples=16)
losses, scaled_losses, scales = [], [], []
for i in range(16):
    loss, scaled_loss, scale = train_step(x[i : i + 1], y[i : i + 1])
    losses.append(float(loss))
    scaled_losses.append(float(scaled_loss))
    scales.append(float(scale))

report(
    dynamic=optimizer.dynamic,
    dynamic_counter_is_none=optimizer.dynamic_counter is None,
    initial_scale=float(optimizer.initial_scale),
    dynamic_growth_steps=optimizer.dynamic_growth_steps,
    loss_scale_is_tensor=tf.is_tensor(optimizer.loss_scale),
    loss_scale=float(tf.keras.backend.get_value(optimizer.loss_scale)),
    is_loss_scale_optimizer=isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer),
    losses=losses,
    scaled_losses=scaled_losses,
    scales=scales,
    iterations=int(optimizer.iterations.numpy()),
    weights=weights(model),
)
