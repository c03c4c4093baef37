"""Manual pattern through Horovod's tape: scale, DistributedGradientTape, unscale, apply, broadcast.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow2/Segmentation/UNet_Medical/runtime/run.py, `train_step` (`loss =
optimizer.get_scaled_loss(loss)` in the tape, `tape = hvd.DistributedGradientTape(tape)`,
`gradients = optimizer.get_unscaled_gradients(gradients)`, `optimizer.apply_gradients(...)`,
then on the warm-up batch `hvd.broadcast_variables(model.variables, root_rank=0)` and
`hvd.broadcast_variables(optimizer.variables(), root_rank=0)`). `hvd` is a one-process
stand-in (hvd.py). `LossScaleOptimizer(optimizer, dynamic=True)`, an inf step at step 3.
"""

import tensorflow as tf

import hvd
from common import data, number, report, small_model, weights

hvd.init()
model = small_model()
optimizer = tf.keras.optimizers.SGD(learning_rate=2**-4)
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer, dynamic=True)


@tf.function
def train_step(features, labels, warmup_batch=False):
    with tf.GradientTape() as tape:
        output_map = model(features)
        loss = tf.reduce_mean(tf.square(output_map - labels))
        unscaled_loss = tf.identity(loss)
        loss = optimizer.get_scaled_loss(loss)
    tape = hvd.DistributedGradientTape(tape)
    gradients = tape.gradient(loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    if warmup_batch:
        hvd.broadcast_variables(model.variables, root_rank=0)
        hvd.broadcast_variables(optimizer.variables(), root_rank=0)
    return unscaled_loss


x, y = data(steps=4, inf_at=2)
losses, scales, iterations = [], [], []
for i in range(4):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1], warmup_batch=i == 0)))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
