"""MirroredStrategy (one CPU device): strategy.run of the manual pattern, loss over the global batch.

Pattern: OpenNMT/OpenNMT-tf@cea9d9e366fcf33adb1797e93c8c2a2d9a057aa9, opennmt/training.py
(`MirroredStrategyTrainer`: `tf.distribute.MirroredStrategy(devices=devices)`; the step runs per
replica through `strategy.run`, `get_scaled_loss` in the tape, `get_unscaled_gradients`, then
`apply_gradients`). Dynamic scale with growth every 2 steps, an inf step at step 3.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0"])
with strategy.scope():
    model = small_model()
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(learning_rate=2**-4), initial_scale=2**9, dynamic_growth_steps=2
    )


def _step(source, target):
    with tf.GradientTape() as tape:
        training_loss = tf.reduce_mean(tf.square(model(source) - target))
        training_loss = training_loss / strategy.num_replicas_in_sync
        scaled_loss = optimizer.get_scaled_loss(training_loss)
    gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(gradients)
    optimizer.apply_gradients(list(zip(gradients, model.trainable_variables)))
    return training_loss


@tf.function
def train_step(source, target):
    per_replica_loss = strategy.run(_step, args=(source, target))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_loss, axis=None)


x, y = data(steps=5, inf_at=2)
losses, scales, iterations = [], [], []
for i in range(5):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
