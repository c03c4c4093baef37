"""Wrap-only loop whose first gradients overflow float16 once the loss is scaled.

Pattern: OpenNMT/OpenNMT-tf@ee8e1dd2eb52e0be63387c8dbad9f300c2680488, opennmt/training.py
(the trainer wraps its optimizer in a loss scale optimizer and applies `tape.gradient` of the
unscaled loss), on a regression that starts far from its target: a float16 Dense(1) kernel of
4 on x = 1, y = 0, so the loss is 16 and its gradient 8. Keras 2 applies the true gradients and
the error halves each step (losses 16, 4, 1, 0.25; the scale stays 2**15). `--target keras3`
scales the loss in the tape (LSO020): 8 * 2**15, 8 * 2**14 and 8 * 2**13 overflow float16, so
Keras 3 skips the first three steps while the scale settles, and the losses differ from TF 2.15.
The codemod says so with a note at the apply_gradients line.
"""

import numpy as np
import tensorflow as tf

from common import number, report, weights

model = tf.keras.Sequential(
    [tf.keras.layers.Dense(1, use_bias=False, input_shape=(1,), dtype="mixed_float16")]
)
model.set_weights([np.array([[4.0]], dtype="float32")])
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=0.25))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.cast(model(x), tf.float32) - y))
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x, y = np.ones((1, 1), dtype="float32"), np.zeros((1, 1), dtype="float32")
losses, scales, iterations = [], [], []
for _ in range(4):
    losses.append(number(train_step(x, y)))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
