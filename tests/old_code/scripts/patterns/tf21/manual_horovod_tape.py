"""TF 2.1-2.8 experimental API: scale, Horovod tape, unscale, apply, broadcast optimizer.variables().

Pattern: NVIDIA/DeepLearningExamples@5cc03caa153faab7a2c3b1b5b5d63663f06ce1b4,
TensorFlow2/Segmentation/UNet_Medical/run.py (`optimizer =
tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")`, `train_step`
with `get_scaled_loss`, `hvd.DistributedGradientTape(tape)`, `get_unscaled_gradients`,
`apply_gradients`, `hvd.broadcast_variables(optimizer.variables(), root_rank=0)`). `hvd` is a
one-process stand-in (../hvd.py). The same program as ../manual_horovod_tape.py (TF215_TWIN,
the later version of that file), whose TF 2.15 numbers are this script's reference.
"""

import tensorflow as tf

import hvd
from common import data, number, report, small_model, weights

TF215_TWIN = "manual_horovod_tape.py"  # the TF 2.4-2.15 spelling of this program, one folder up

hvd.init()
model = small_model()
optimizer = tf.keras.optimizers.SGD(learning_rate=2**-4)
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")


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
    scales.append(float(optimizer.loss_scale()))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
