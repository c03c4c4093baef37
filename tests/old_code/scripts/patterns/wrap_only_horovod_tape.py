"""Wrap-only Horovod loop: DistributedGradientTape over the unscaled loss, broadcast after step 1.

Pattern: horovod/horovod@debd217097532a67942ca1e2f1c1ec89a09710d6,
examples/tensorflow2/tensorflow2_mnist.py (`tape = hvd.DistributedGradientTape(tape)`,
`grads = tape.gradient(loss_value, ...)`, `opt.apply_gradients(...)`, and on the first batch
`hvd.broadcast_variables(mnist_model.variables, root_rank=0)` and
`hvd.broadcast_variables(opt.variables(), root_rank=0)`), with `opt` wrapped in a loss scale
optimizer for mixed_float16. `hvd` is a one-process stand-in (hvd.py). Dynamic scale.
"""

import tensorflow as tf

import hvd
from common import data, number, report, small_model, weights

hvd.init()
mnist_model = small_model()
opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(2**-4 * hvd.size()))


@tf.function
def training_step(images, labels, first_batch):
    with tf.GradientTape() as tape:
        loss_value = tf.reduce_mean(tf.square(mnist_model(images, training=True) - labels))
    tape = hvd.DistributedGradientTape(tape)
    grads = tape.gradient(loss_value, mnist_model.trainable_variables)
    opt.apply_gradients(zip(grads, mnist_model.trainable_variables))
    if first_batch:
        hvd.broadcast_variables(mnist_model.variables, root_rank=0)
        hvd.broadcast_variables(opt.variables(), root_rank=0)
    return loss_value


x, y = data(steps=4)
losses, scales, iterations = [], [], []
for batch in range(4):
    losses.append(number(training_step(x[batch : batch + 1], y[batch : batch + 1], batch == 0)))
    scales.append(float(opt.loss_scale))
    iterations.append(int(opt.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(mnist_model))
