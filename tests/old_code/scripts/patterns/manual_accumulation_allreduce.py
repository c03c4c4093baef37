"""Accumulate unscaled gradients, all-reduce their average, clip, apply every 2 steps.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow2/LanguageModeling/BERT/official/modeling/model_training_utils.py (`forward`:
`get_scaled_loss`, `get_unscaled_gradients`, `accum_gradients.add_gradients(grads)`; `step`:
`hvd.allreduce(g / tf.cast(num_grad_accumulates, g.dtype))`, `tf.clip_by_global_norm`,
`optimizer.apply_gradients`, `accum_gradients.reset()`). The accumulator is a list of variables;
`hvd` a one-process stand-in (hvd.py). Dynamic scale, an inf step at step 3 (the accumulated
sum is inf, so the update after it is skipped).
"""

import tensorflow as tf

import hvd
from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))
training_vars = model.trainable_variables
accum_gradients = [tf.Variable(tf.zeros_like(v), trainable=False) for v in training_vars]


@tf.function
def forward(inputs, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(inputs, training=True) - labels))
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, training_vars)
    grads = optimizer.get_unscaled_gradients(scaled_grads)
    for accumulator, grad in zip(accum_gradients, grads):
        accumulator.assign_add(grad)
    return loss


@tf.function
def step(num_grad_accumulates):
    gradients = [hvd.allreduce(g / tf.cast(num_grad_accumulates, g.dtype)) for g in accum_gradients]
    (gradients, _) = tf.clip_by_global_norm(gradients, clip_norm=1.0)
    optimizer.apply_gradients(zip(gradients, training_vars))
    for accumulator in accum_gradients:
        accumulator.assign(tf.zeros_like(accumulator))


x, y = data(steps=8, inf_at=2)
losses, scales, iterations = [], [], []
for i in range(8):
    losses.append(number(forward(x[i : i + 1], y[i : i + 1])))
    if i % 2 == 1:
        step(2)
        scales.append(float(optimizer.loss_scale))
        iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
