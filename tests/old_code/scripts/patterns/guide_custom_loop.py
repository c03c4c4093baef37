"""The mixed precision guide's custom training loop, with `dynamic_counter` read after each step.

Pattern: tensorflow/docs@945a448704b25a0897ed24abd45ab4d0b0d6f3c2, site/en/guide/mixed_precision.ipynb
("Training the model with a custom training loop": `optimizer =
mixed_precision.LossScaleOptimizer(optimizer)`, `train_step` in tf.function with
`scaled_loss = optimizer.get_scaled_loss(loss)` in the tape, `scaled_gradients =
tape.gradient(...)`, `gradients = optimizer.get_unscaled_gradients(scaled_gradients)`,
`optimizer.apply_gradients(...)`). Growth every 2 steps, an inf step at step 4.
"""

import tensorflow as tf
from tensorflow.keras import mixed_precision

from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.optimizers.SGD(learning_rate=2**-4)
optimizer = mixed_precision.LossScaleOptimizer(optimizer, initial_scale=2**6, dynamic_growth_steps=2)
loss_object = tf.keras.losses.MeanSquaredError()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x)
        loss = loss_object(y, predictions)
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x, y = data(steps=6, inf_at=3)
losses, scales, counters, iterations = [], [], [], []
for i in range(6):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    counters.append(int(optimizer.dynamic_counter.numpy()))
    iterations.append(int(optimizer.iterations.numpy()))

report(
    losses=losses,
    scales=scales,
    dynamic_counters=counters,
    iterations=iterations,
    weights=weights(model),
)
