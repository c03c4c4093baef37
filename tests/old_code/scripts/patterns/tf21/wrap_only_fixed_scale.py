"""TF 2.1-2.8 experimental API, wrap-only with a fixed scale: LossScaleOptimizer(opt, loss_scale=1024).

Pattern: mlcommons/training@a0671ab8c9668d4acf86977ad6c9d36995431197,
image_classification/tensorflow2/tf2_common/modeling/performance.py
(`tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale=loss_scale)`),
driven by a wrap-only loop. The same program as ../wrap_only_fixed_scale.py (TF215_TWIN), whose
TF 2.15 numbers are this script's reference.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

TF215_TWIN = "wrap_only_fixed_scale.py"  # the TF 2.4-2.15 spelling of this program, one folder up

model = small_model()
mlp_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-4), loss_scale=1024
)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    gradients = tape.gradient(loss, model.trainable_variables)
    mlp_optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x, y = data(steps=4)
losses, scales, iterations = [], [], []
for i in range(4):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(mlp_optimizer.loss_scale()))
    iterations.append(int(mlp_optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
