"""Wrap-only loop: a tf.function returns the gradients, another function applies them.

Pattern: OpenNMT/OpenNMT-tf@ee8e1dd2eb52e0be63387c8dbad9f300c2680488, opennmt/training.py
(`_compute_gradients` returns `reported_loss, gradients` of the unscaled training loss;
`_forward_and_step` passes them to `_apply_gradients`, which calls the wrapped optimizer's
`apply_gradients`). Dynamic scale, no overflow.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))


@tf.function
def compute_gradients(x, y):
    with tf.GradientTape() as tape:
        training_loss = tf.reduce_mean(tf.square(model(x) - y))
    gradients = tape.gradient(training_loss, model.trainable_variables)
    return training_loss, gradients


def apply_gradients(gradients):
    optimizer.apply_gradients(list(zip(gradients, model.trainable_variables)))


def forward_and_step(x, y):
    loss, gradients = compute_gradients(x, y)
    apply_gradients(gradients)
    return loss


x, y = data(steps=4)
losses, scales, iterations = [], [], []
for i in range(4):
    losses.append(number(forward_and_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
