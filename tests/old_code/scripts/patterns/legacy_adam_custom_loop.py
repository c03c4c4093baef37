"""A custom loop over `LossScaleOptimizer(tf.keras.optimizers.legacy.Adam(...))`, Adam's bias
correction and an iteration-keyed schedule reading `iterations`, as TF 2.11-2.15 code kept its
optimizer on the legacy classes (issue 32).

Pattern: tensorflow/docs@945a448704b25a0897ed24abd45ab4d0b0d6f3c2, site/en/guide/mixed_precision.ipynb
("Training the model with a custom training loop"), with the inner optimizer
`tf.keras.optimizers.legacy.Adam` on a PiecewiseConstantDecay keyed on the step. The first step is
finite; the next ones overflow float16 while the dynamic scale halves, and TF 2.15 counts them in
`iterations`. On Keras 3 the legacy name builds Keras 3's Adam: the same formulas, which TF 2.15
computes in a fused kernel, so the weights agree in the last bits only (the runtime's warning and
LSO024's note say so; test_patterns.py compares this script within LAST_BITS).
"""

import tensorflow as tf
from tensorflow.keras import mixed_precision

from common import number, overflowing_data, report, small_model, weights

model = small_model()
schedule = tf.keras.optimizers.schedules.PiecewiseConstantDecay([4], [2**-6, 2**-8])
optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.legacy.Adam(schedule))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    gradients = optimizer.get_unscaled_gradients(
        tape.gradient(scaled_loss, model.trainable_variables)
    )
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x, y = overflowing_data(steps=8)
y[0] = 0.0  # the first step is finite
losses, scales, iterations = [], [], []
for i in range(8):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
