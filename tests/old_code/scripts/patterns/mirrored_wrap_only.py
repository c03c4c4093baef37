"""MirroredStrategy (one CPU device), wrap-only: per-replica gradients of the unscaled loss applied.

Pattern: OpenNMT/OpenNMT-tf@ee8e1dd2eb52e0be63387c8dbad9f300c2680488, opennmt/training.py (the
`MirroredStrategyTrainer` of that version runs `_forward_and_step` per replica: the loss scale
optimizer wraps the optimizer, the gradients are those of the unscaled training loss, and
`apply_gradients` all-reduces them across replicas). Dynamic scale.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0"])
with strategy.scope():
    model = small_model()
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))


def _forward_and_step(source, target):
    with tf.GradientTape() as tape:
        training_loss = tf.reduce_mean(tf.square(model(source) - target))
    gradients = tape.gradient(training_loss, model.trainable_variables)
    optimizer.apply_gradients(list(zip(gradients, model.trainable_variables)))
    return training_loss


@tf.function
def train_step(source, target):
    per_replica_loss = strategy.run(_forward_and_step, args=(source, target))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_loss, axis=None)


x, y = data(steps=4)
losses, scales, iterations = [], [], []
for i in range(4):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
