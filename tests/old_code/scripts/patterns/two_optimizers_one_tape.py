"""Two loss scale optimizers over one tape: each scales the same loss, unscales its own part.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow2/Recommendation/WideAndDeep/trainer/utils/trainer.py, `Trainer.__call__`
(`linear_loss = self.wide_optimizer.get_scaled_loss(loss)`, `dnn_loss =
self.deep_optimizer.get_scaled_loss(loss)` in one persistent tape, `hvd.DistributedGradientTape`,
`get_unscaled_gradients` per optimizer, two `apply_gradients`, and on the first batch
`hvd.broadcast_variables(self.wide_optimizer.variables(), root_rank=0)` for each). `hvd` is a
one-process stand-in (hvd.py). Different dynamic settings per optimizer, an inf step at step 2.
"""

import tensorflow as tf

import hvd
from common import data, number, report, set_starting_weights, weights

linear_model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,), dtype="mixed_float16")])
dnn_model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(4, activation="relu", input_shape=(1,), dtype="mixed_float16"),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(linear_model, seed=2)
set_starting_weights(dnn_model, seed=3)
wide_optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-5), initial_scale=2**12, dynamic_growth_steps=2
)
deep_optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))
linear_vars = linear_model.trainable_variables
dnn_vars = dnn_model.trainable_variables


@tf.function
def train_step(x, y, first_batch):
    with tf.GradientTape(persistent=True) as tape:
        prediction = tf.cast(linear_model(x), tf.float32) + dnn_model(x)
        loss = tf.reduce_mean(tf.square(prediction - y))
        linear_loss = wide_optimizer.get_scaled_loss(loss)
        dnn_loss = deep_optimizer.get_scaled_loss(loss)
    tape = hvd.DistributedGradientTape(tape, sparse_as_dense=True)
    linear_grads = tape.gradient(linear_loss, linear_vars)
    dnn_grads = tape.gradient(dnn_loss, dnn_vars)
    linear_grads = wide_optimizer.get_unscaled_gradients(linear_grads)
    dnn_grads = deep_optimizer.get_unscaled_gradients(dnn_grads)
    wide_optimizer.apply_gradients(zip(linear_grads, linear_vars))
    deep_optimizer.apply_gradients(zip(dnn_grads, dnn_vars))
    if first_batch:
        hvd.broadcast_variables(linear_model.variables, root_rank=0)
        hvd.broadcast_variables(dnn_model.variables, root_rank=0)
        hvd.broadcast_variables(wide_optimizer.variables(), root_rank=0)
        hvd.broadcast_variables(deep_optimizer.variables(), root_rank=0)
    return loss


x, y = data(steps=5, inf_at=1)
losses, scales, iterations = [], [], []
for i in range(5):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1], i == 0)))
    scales.append([float(wide_optimizer.loss_scale), float(deep_optimizer.loss_scale)])
    iterations.append([int(wide_optimizer.iterations.numpy()), int(deep_optimizer.iterations.numpy())])

report(
    losses=losses,
    scales=scales,
    iterations=iterations,
    weights=weights(linear_model) + weights(dnn_model),
)
