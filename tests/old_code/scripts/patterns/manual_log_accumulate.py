"""Unscaled gradients logged and accumulated over micro-batches, then applied once.

Pattern: OpenNMT/OpenNMT-tf@cea9d9e366fcf33adb1797e93c8c2a2d9a057aa9, opennmt/training.py
(`_compute_gradients`: `get_scaled_loss` in the tape, `get_unscaled_gradients`, then
`_summarize_gradients(gradients, ...)`, which logs `tf.linalg.global_norm(gradients)`; the
gradients of `accum_steps` batches are summed before one `apply_gradients`). OpenNMT sums them in
a GradientAccumulator across calls (which the codemod reports); here the sum is a list in the
step function, over two micro-batches. Dynamic scale, an inf sample in the second step's first
micro-batch (its sum is inf, so that update is skipped); the norms logged are reported.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))
variables = model.trainable_variables


@tf.function
def step(x, y):
    total, norms, losses = None, [], []
    for micro in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x[micro : micro + 1], training=True) - y[micro : micro + 1]))
            training_loss = optimizer.get_scaled_loss(loss)
        gradients = tape.gradient(training_loss, variables)
        gradients = optimizer.get_unscaled_gradients(gradients)
        norms.append(tf.linalg.global_norm(gradients))
        losses.append(loss)
        total = gradients if total is None else [a + g for a, g in zip(total, gradients)]
    optimizer.apply_gradients(zip(total, variables))
    return losses, norms


x, y = data(steps=8, inf_at=2)
losses, norms, scales, iterations = [], [], [], []
for i in range(4):
    step_losses, step_norms = step(x[2 * i : 2 * i + 2], y[2 * i : 2 * i + 2])
    losses += [number(v) for v in step_losses]
    norms += [number(v) for v in step_norms]
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, norms=norms, scales=scales, iterations=iterations, weights=weights(model))
