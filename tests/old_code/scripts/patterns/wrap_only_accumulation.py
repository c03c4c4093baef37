"""Wrap-only gradient accumulation: unscaled gradients summed over 2 steps, averaged, applied.

Pattern: OpenNMT/OpenNMT-tf@ee8e1dd2eb52e0be63387c8dbad9f300c2680488, opennmt/training.py
(`_forward` accumulates the gradients of the unscaled loss in a GradientAccumulator, `_step`
calls `_apply_gradients(accumulated, scale=step)`, which divides by the step count and calls the
wrapped optimizer's `apply_gradients`). The accumulator here is a list of variables, as
OpenNMT's `GradientAccumulator` is. Dynamic scale.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))
accumulated = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]


@tf.function
def forward(x, y):
    with tf.GradientTape() as tape:
        training_loss = tf.reduce_mean(tf.square(model(x) - y))
    gradients = tape.gradient(training_loss, model.trainable_variables)
    for accumulator, gradient in zip(accumulated, gradients):
        accumulator.assign_add(gradient)
    return training_loss


@tf.function
def step(accumulation_steps):
    gradients = [a / tf.cast(accumulation_steps, a.dtype) for a in accumulated]
    optimizer.apply_gradients(list(zip(gradients, model.trainable_variables)))
    for accumulator in accumulated:
        accumulator.assign(tf.zeros_like(accumulator))


x, y = data(steps=6)
losses, scales, iterations = [], [], []
for i in range(6):
    losses.append(number(forward(x[i : i + 1], y[i : i + 1])))
    if i % 2 == 1:
        step(2)
        scales.append(float(optimizer.loss_scale))
        iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
