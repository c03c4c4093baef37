"""Keras 2's manual pattern behind isinstance checks: get_scaled_loss, get_unscaled_gradients.

Pattern: tensorflow/models@00d83f37e2de5852699ed339d0c51085ab065651, official/core/base_task.py,
`Task.train_step` (the loss divided by `num_replicas_in_sync`; `if isinstance(optimizer,
tf.keras.mixed_precision.LossScaleOptimizer)`: `get_scaled_loss` inside the tape and
`get_unscaled_gradients` after it; `optimizer.apply_gradients(list(zip(grads, tvars)))`).
Dynamic scale with growth every 2 steps, an inf step at step 3.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-4), initial_scale=2**10, dynamic_growth_steps=2
)


@tf.function
def train_step(features, labels):
    with tf.GradientTape() as tape:
        outputs = model(features, training=True)
        loss = tf.reduce_mean(tf.square(outputs - labels))
        scaled_loss = loss / tf.distribute.get_strategy().num_replicas_in_sync
        if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
            scaled_loss = optimizer.get_scaled_loss(scaled_loss)
    tvars = model.trainable_variables
    grads = tape.gradient(scaled_loss, tvars)
    if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
        grads = optimizer.get_unscaled_gradients(grads)
    optimizer.apply_gradients(list(zip(grads, tvars)))
    return loss


x, y = data(steps=5, inf_at=2)
losses, scales, iterations = [], [], []
for i in range(5):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
