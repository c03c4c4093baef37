"""TF 2.1-2.8 experimental API, wrap-only: LossScaleOptimizer(optimizer, "dynamic"), unscaled loss.

Pattern: OpenNMT/OpenNMT-tf@ee8e1dd2eb52e0be63387c8dbad9f300c2680488, opennmt/training.py
(`tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")`, gradients of
the unscaled training loss, `apply_gradients`). The same program as ../wrap_only_plain_tape.py
(TF215_TWIN) in the experimental spelling; TF 2.15 has no experimental API, so the twin's
TF 2.15 numbers are this script's reference. An inf step at step 2.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

TF215_TWIN = "wrap_only_plain_tape.py"  # the TF 2.4-2.15 spelling of this program, one folder up

model = small_model()
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4), "dynamic")


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
    scales.append(float(optimizer.loss_scale()))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
