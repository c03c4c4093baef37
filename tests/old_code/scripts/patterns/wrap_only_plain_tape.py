"""Wrap-only loop: gradients of the unscaled loss from a plain tape, then apply_gradients.

Pattern: OpenNMT/OpenNMT-tf@ee8e1dd2eb52e0be63387c8dbad9f300c2680488, opennmt/training.py
(the trainer wraps its optimizer in a loss scale optimizer, `_compute_gradients` takes
`tape.gradient(training_loss, ...)` and `_apply_gradients` calls `apply_gradients`; the loss is
never scaled). Keras 2's `apply_gradients` does not unscale, so this trains at the true gradients.
Dynamic scale (the default 2**15), an inf step at step 2.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x, y = data(steps=4, inf_at=1)
losses, scales, iterations = [], [], []
for i in range(4):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
