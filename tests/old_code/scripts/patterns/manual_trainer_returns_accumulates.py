"""A trainer class whose private method returns the unscaled gradients (one micro-batch per step)
or keeps them in an accumulator attribute (several), applied by another method.

Pattern: TensorSpeech/TensorFlowTTS@136877136355c82d7ba474ceb7a8f133bd84767e,
tensorflow_tts/trainers/base_trainer.py (`GanBasedTrainer._calculate_generator_gradient_per_batch`:
`get_scaled_loss`, `tf.gradients`, `get_unscaled_gradients`; `self._generator_gradient_accumulator
(gradients)` when `gradient_accumulation_steps > 1`; `return gradients, loss` when it is 1, else
`return loss`; `_one_step_forward_per_replica` applies the returned gradients, or
`self._generator_gradient_accumulator.gradients` after the micro-batches, then `reset()`). Two
trainers, one per setting, each with its own model. Dynamic scale, inf samples (in float16):
the steps holding them are skipped, the scale halves.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights


class GradientAccumulator:
    """A sum of gradients in variables, as TensorFlowTTS's (tensorflow_tts/optimizers)."""

    def __init__(self, variables):
        self._sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]

    @property
    def gradients(self):
        return [s.value() for s in self._sums]

    def __call__(self, gradients):
        for total, gradient in zip(self._sums, gradients):
            total.assign_add(gradient)

    def reset(self):
        for total in self._sums:
            total.assign(tf.zeros_like(total))


class Trainer:
    def __init__(self, accumulation_steps):
        self.config = {"gradient_accumulation_steps": accumulation_steps}
        self._model = small_model()
        self._optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(learning_rate=2**-6)
        )
        self._gradient_accumulator = GradientAccumulator(self._model.trainable_variables)

    def _calculate_gradient_per_batch(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self._model(x, training=True) - y))
            scaled_loss = self._optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, self._model.trainable_variables)
        gradients = self._optimizer.get_unscaled_gradients(scaled_gradients)
        if self.config["gradient_accumulation_steps"] > 1:
            self._gradient_accumulator(gradients)
        if self.config["gradient_accumulation_steps"] == 1:
            return gradients, loss
        else:
            return loss

    @tf.function
    def _one_step_forward(self, x, y):
        variables = self._model.trainable_variables
        if self.config["gradient_accumulation_steps"] == 1:
            gradients, losses = self._calculate_gradient_per_batch(x, y)
            self._optimizer.apply_gradients(zip(gradients, variables))
        else:
            losses = 0.0
            for i in range(self.config["gradient_accumulation_steps"]):
                losses += self._calculate_gradient_per_batch(x[i : i + 1], y[i : i + 1])
            gradients = self._gradient_accumulator.gradients
            self._optimizer.apply_gradients(zip(gradients, variables))
            self._gradient_accumulator.reset()
        return losses

    def fit(self, x, y, steps):
        n = self.config["gradient_accumulation_steps"]
        losses, scales, iterations = [], [], []
        for i in range(steps):
            losses.append(number(self._one_step_forward(x[i * n : (i + 1) * n], y[i * n : (i + 1) * n])))
            scales.append(float(self._optimizer.loss_scale))
            iterations.append(int(self._optimizer.iterations.numpy()))
        return losses, scales, iterations


x, y = data(steps=20, inf_at=3)
x[14, 0] = 1e30
single, accumulated = Trainer(1), Trainer(2)
losses_1, scales_1, iterations_1 = single.fit(x, y, steps=10)
losses_2, scales_2, iterations_2 = accumulated.fit(x, y, steps=10)
report(  # per step, one value per trainer
    losses=[list(pair) for pair in zip(losses_1, losses_2)],
    scales=[list(pair) for pair in zip(scales_1, scales_2)],
    iterations=[list(pair) for pair in zip(iterations_1, iterations_2)],
    weights=[weights(single._model), weights(accumulated._model)],
)
