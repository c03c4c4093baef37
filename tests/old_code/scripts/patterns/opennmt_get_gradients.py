"""OpenNMT-tf's gradients outside eager execution: `optimizer.get_gradients(loss, variables)` on
the loss scale optimizer inside a tf.function, which scales the loss, takes `tf.gradients` and
unscales them (TF 2.4-2.10's OptimizerV2 API), then `apply_gradients` of those.

Pattern: OpenNMT/OpenNMT-tf@cea9d9e366fcf33adb1797e93c8c2a2d9a057aa9, opennmt/training.py
(`Trainer._compute_gradients`: "In mixed precision training, LossScaleOptimizer.get_gradients
takes care of loss scaling"; `_apply_gradients`), the wrapper from `_add_mixed_precision_wrapper`.
The inner optimizer is a legacy SGD: TF 2.15's default optimizer has no get_gradients (TF 2.4-2.10's
had), its legacy ones do. The targets after the first overflow float16 at the initial scale, so
the next steps are skipped while the scale halves. On Keras 3 the legacy name builds Keras 3's
SGD (the same rule, bit for bit), and Keras 3's own loss scale optimizer has no get_gradients.
"""

import tensorflow as tf

from common import number, overflowing_data, report, small_model, weights

model = small_model()
optimizer = tf.keras.optimizers.legacy.SGD(learning_rate=2**-8, momentum=0.5)
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
loss_object = tf.keras.losses.MeanSquaredError()


@tf.function
def train_step(x, y):
    loss = loss_object(y, model(x))
    gradients = optimizer.get_gradients(loss, model.trainable_variables)
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
