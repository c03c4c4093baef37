"""Unscaled gradients added to an accumulator object over micro-batches, applied by another
function, clipped first.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow2/LanguageModeling/BERT/official/modeling/model_training_utils.py
(`run_customized_training_loop`: `accum_gradients = GradientAccumulator()`; `forward` scales the
loss, unscales the gradients and `accum_gradients.add_gradients(grads)`; `step` reads
`accum_gradients.gradients`, divides by the number of micro-batches, clips by global norm,
`optimizer.apply_gradients` and `accum_gradients.reset()`; one tf.function runs both). The
codemod rewrites it optimizer-wide on keras3 (unscaled explicitly in `forward`, scaled back in
`step`). Dynamic scale, inf samples (in float16) in two micro-batches: those steps are skipped and
the scale halves, so later steps unscale and scale back at 2**14 and 2**13.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights


class GradientAccumulator:
    """A sum of gradients in variables, as BERT's (official/modeling/optimization.py)."""

    def __init__(self, variables):
        self._sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]

    @property
    def gradients(self):
        return [s.value() for s in self._sums]

    def add_gradients(self, gradients):
        for total, gradient in zip(self._sums, gradients):
            total.assign_add(gradient)

    def reset(self):
        for total in self._sums:
            total.assign(tf.zeros_like(total))


def train(model, optimizer, x, y, steps, micro_batches):
    variables = model.trainable_variables
    accum_gradients = GradientAccumulator(variables)

    def forward(inputs, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(inputs, training=True) - labels))
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_grads = tape.gradient(scaled_loss, variables)
        grads = optimizer.get_unscaled_gradients(scaled_grads)
        accum_gradients.add_gradients(grads)
        return loss

    def step(num_grad_accumulates):
        gradients = accum_gradients.gradients
        gradients = [g / tf.cast(num_grad_accumulates, g.dtype) for g in gradients]
        (gradients, _) = tf.clip_by_global_norm(gradients, clip_norm=0.5)
        optimizer.apply_gradients(zip(gradients, variables))
        accum_gradients.reset()

    @tf.function
    def train_steps(inputs, labels):
        losses = [forward(inputs[m : m + 1], labels[m : m + 1]) for m in range(micro_batches)]
        step(micro_batches)
        return losses

    losses, scales, iterations = [], [], []
    for i in range(steps):
        rows = slice(i * micro_batches, (i + 1) * micro_batches)
        losses += [number(v) for v in train_steps(x[rows], y[rows])]
        scales.append(float(optimizer.loss_scale))
        iterations.append(int(optimizer.iterations.numpy()))
    return losses, scales, iterations


x, y = data(steps=20, inf_at=5)
x[12, 0] = 1e30  # inf in float16: the steps holding micro-batches 5 and 12 are skipped
model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-6))
losses, scales, iterations = train(model, optimizer, x, y, steps=10, micro_batches=2)
report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
