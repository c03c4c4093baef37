"""TF 2.2-2.3 spelling: a DynamicLossScale object, the manual pattern behind isinstance checks.

Pattern: tensorflow/models@00d83f37e2de5852699ed339d0c51085ab065651, official/core/base_task.py
(`Task.train_step`), with the optimizer built as TF 2.2-2.3 code built a dynamic loss scale
with its own settings: `tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=...,
increment_period=...)` passed to `tf.keras.mixed_precision.experimental.LossScaleOptimizer`.
The same program as ../manual_base_task.py (TF215_TWIN), whose TF 2.15 numbers are this
script's reference.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

TF215_TWIN = "manual_base_task.py"  # the TF 2.4-2.15 spelling of this program, one folder up

model = small_model()
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-4),
    tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=2**10, increment_period=2),
)


@tf.function
def train_step(features, labels):
    with tf.GradientTape() as tape:
        outputs = model(features, training=True)
        loss = tf.reduce_mean(tf.square(outputs - labels))
        scaled_loss = loss / tf.distribute.get_strategy().num_replicas_in_sync
        if isinstance(optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
            scaled_loss = optimizer.get_scaled_loss(scaled_loss)
    tvars = model.trainable_variables
    grads = tape.gradient(scaled_loss, tvars)
    if isinstance(optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
        grads = optimizer.get_unscaled_gradients(grads)
    optimizer.apply_gradients(list(zip(grads, tvars)))
    return loss


x, y = data(steps=5, inf_at=2)
losses, scales, iterations = [], [], []
for i in range(5):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale()))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
