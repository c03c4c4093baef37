"""The mixed precision guide's custom training loop over a legacy optimizer, as TF 2.11-2.15 code
kept it (`tf.keras.optimizers.legacy`, for checkpoints or Horovod; issue 32).

Pattern: tensorflow/docs@945a448704b25a0897ed24abd45ab4d0b0d6f3c2, site/en/guide/mixed_precision.ipynb
("Training the model with a custom training loop": `mixed_precision.LossScaleOptimizer(optimizer)`,
`get_scaled_loss` in the tape, `get_unscaled_gradients`, `apply_gradients`), with the inner
optimizer `tf.keras.optimizers.legacy.SGD` with Nesterov momentum. The targets after the first
overflow float16 at the initial scale, so the next steps are skipped while the scale halves; TF 2.15 counts them in
`iterations`. On Keras 3 the legacy name builds Keras 3's SGD (the same rule, bit for bit).
"""

import tensorflow as tf
from tensorflow.keras import mixed_precision

from common import number, overflowing_data, report, small_model, weights

model = small_model()
optimizer = tf.keras.optimizers.legacy.SGD(learning_rate=2**-8, momentum=0.5, nesterov=True)
optimizer = mixed_precision.LossScaleOptimizer(optimizer)
loss_object = tf.keras.losses.MeanSquaredError()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_object(y, model(x))
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x, y = overflowing_data(steps=8)
y[0] = 0.0  # the first step is finite; the next ones overflow while the scale halves
losses, scales, iterations = [], [], []
for i in range(8):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
