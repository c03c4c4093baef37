"""Wrap-only loop with a fixed loss scale: LossScaleOptimizer(opt, dynamic=False, initial_scale=...).

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow2/Recommendation/DLRM/main.py (`LossScaleOptimizer(mlp_optimizer,
initial_scale=FLAGS.loss_scale, dynamic=False)`), driven by a loop that takes gradients of the
unscaled loss and calls `apply_gradients` (the wrap-only loops above). Keras 2 applies them as
they are; with a fixed scale an inf step is applied too (nothing skips it), so none here.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
mlp_optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-4), initial_scale=1024, dynamic=False
)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    gradients = tape.gradient(loss, model.trainable_variables)
    mlp_optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x, y = data(steps=4)
losses, scales, iterations = [], [], []
for i in range(4):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(mlp_optimizer.loss_scale))
    iterations.append(int(mlp_optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
