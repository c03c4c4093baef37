"""Wrap-only loop with an all-reduce between the tape and apply_gradients.

Pattern: OpenNMT/OpenNMT-tf@ee8e1dd2eb52e0be63387c8dbad9f300c2680488, opennmt/training.py
(`_apply_gradients` divides each gradient of the unscaled loss by the number of replicas and
all-reduces it, `self._all_reduce_sum(gradient / ...)`, before the wrapped optimizer's
`apply_gradients`). The all-reduce here is Horovod's over one process (hvd.py, a stand-in).
Dynamic scale with growth every 2 steps, an inf step at step 2.
"""

import tensorflow as tf

import hvd
from common import data, number, report, small_model, weights

hvd.init()
model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-4), initial_scale=2**8, dynamic_growth_steps=2
)
num_replicas = hvd.size()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        training_loss = tf.reduce_mean(tf.square(model(x) - y))
    gradients = tape.gradient(training_loss, model.trainable_variables)
    gradients = [hvd.allreduce(g / tf.cast(num_replicas, g.dtype), op="Sum") for g in gradients]
    optimizer.apply_gradients(list(zip(gradients, model.trainable_variables)))
    return training_loss


x, y = data(steps=5, inf_at=1)
losses, scales, iterations = [], [], []
for i in range(5):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
