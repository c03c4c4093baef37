"""`minimize(loss_tensor, var_list, tape=tape)` on the loss scale optimizer, in tf.function.

Pattern: tensorflow/tpu@01b67067be64987e9519b35342ba91d3179daeed,
models/official/retinanet/retinanet_model.py (`minimize_op = optimizer.minimize(total_loss,
global_step, var_list=var_list)`), in Keras 2's tensor-and-tape spelling of minimize, on a
loss-scaled optimizer with a fixed scale.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-4), dynamic=False, initial_scale=64
)


@tf.function
def train_step(features, labels):
    var_list = model.trainable_variables
    with tf.GradientTape() as tape:
        total_loss = tf.reduce_mean(tf.square(model(features) - labels))
    optimizer.minimize(total_loss, var_list, tape=tape)
    return total_loss


x, y = data(steps=4)
losses, scales, iterations = [], [], []
for i in range(4):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
