"""Two loss scale optimizers kept in a list and a trainer's attributes; state read from both.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947, TensorFlow2/Recommendation/DLRM/main.py
(`embedding_optimizer = LossScaleOptimizer(...)`, `mlp_optimizer = LossScaleOptimizer(...)`,
`optimizers = [mlp_optimizer, embedding_optimizer]` handed to a LearningRateScheduler, and
`DlrmTrainer(dlrm, embedding_optimizer=..., mlp_optimizer=...)` keeping them as attributes that
its train_step scales and applies through). Here the trainer is a class of the same module and
logging helpers read each optimizer's loss scale and counter out of the list (issue 32: the
codemod must follow the optimizers through the list, the keyword arguments and the
attributes). Two dense layers, one optimizer each; growth every 2 steps, an inf step at step 2.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights


class Trainer:
    def __init__(self, model, first_optimizer, second_optimizer):
        self.model = model
        self.first_optimizer = first_optimizer
        self.second_optimizer = second_optimizer

    @tf.function
    def train_step(self, x, y):
        first = self.model.layers[0].trainable_variables
        second = self.model.layers[1].trainable_variables
        with tf.GradientTape(persistent=True) as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
            scaled_first = self.first_optimizer.get_scaled_loss(loss)
            scaled_second = self.second_optimizer.get_scaled_loss(loss)
        first_grads = self.first_optimizer.get_unscaled_gradients(
            tape.gradient(scaled_first, first)
        )
        self.first_optimizer.apply_gradients(zip(first_grads, first))
        second_grads = self.second_optimizer.get_unscaled_gradients(
            tape.gradient(scaled_second, second)
        )
        self.second_optimizer.apply_gradients(zip(second_grads, second))
        return loss


def scales(optimizers):
    return [float(optimizers[0].loss_scale), float(optimizers[1].loss_scale)]


def counters(optimizers):
    return [int(optimizers[0].dynamic_counter.numpy()), int(optimizers[1].dynamic_counter.numpy())]


model = small_model()
first_optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-4), initial_scale=2**6, dynamic_growth_steps=2
)
second_optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-3), initial_scale=2**8, dynamic_growth_steps=2
)
optimizers = [first_optimizer, second_optimizer]
trainer = Trainer(model, first_optimizer=first_optimizer, second_optimizer=second_optimizer)

x, y = data(steps=5, inf_at=1)
losses, scale_pairs, counter_pairs, iterations = [], [], [], []
for i in range(5):
    losses.append(number(trainer.train_step(x[i : i + 1], y[i : i + 1])))
    scale_pairs.append(scales(optimizers))
    counter_pairs.append(counters(optimizers))
    iterations.append([int(o.iterations.numpy()) for o in optimizers])

report(
    losses=losses,
    scales=scale_pairs,
    dynamic_counters=counter_pairs,
    iterations=iterations,
    weights=weights(model),
)
