"""`optimizer = model.optimizer`; scale, Horovod tape, unscale, clip, apply, broadcast variables().

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow2/LanguageModeling/BERT/official/modeling/model_training_utils.py, `run_customized_
training_loop` (`optimizer = model.optimizer`, `use_float16 = isinstance(optimizer,
tf.keras.mixed_precision.LossScaleOptimizer)`; `_replicated_step`: `get_scaled_loss`,
`hvd.DistributedGradientTape`, `get_unscaled_gradients`, `tf.clip_by_global_norm(grads,
clip_norm=1.0)`, `apply_gradients`, `hvd.broadcast_variables(optimizer.variables(), 0)` on the
first batch), with the model's optimizer set as TensorFlow2/LanguageModeling/BERT/run_pretraining.py
does (`pretrain_model.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(pretrain_model.
optimizer, dynamic=True)`). `hvd` is a one-process stand-in (hvd.py). Logs the loss scale as
model_training_utils does.
"""

import tensorflow as tf

import hvd
from common import data, number, report, small_model, weights

hvd.init()
model = small_model()
model.optimizer = tf.keras.optimizers.SGD(learning_rate=2**-4)
model.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(model.optimizer, dynamic=True)

optimizer = model.optimizer
use_float16 = isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
training_vars = model.trainable_variables


@tf.function
def _replicated_step(inputs, labels, first_batch=False):
    with tf.GradientTape() as tape:
        model_outputs = model(inputs, training=True)
        loss = tf.reduce_mean(tf.square(model_outputs - labels))
        if use_float16:
            scaled_loss = optimizer.get_scaled_loss(loss)
    tape = hvd.DistributedGradientTape(tape, sparse_as_dense=True)
    if use_float16:
        scaled_grads = tape.gradient(scaled_loss, training_vars)
        grads = optimizer.get_unscaled_gradients(scaled_grads)
    else:
        grads = tape.gradient(loss, training_vars)
    (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
    optimizer.apply_gradients(zip(grads, training_vars))
    if first_batch:
        hvd.broadcast_variables(model.variables, 0)
        hvd.broadcast_variables(optimizer.variables(), 0)
    return loss


x, y = data(steps=4, inf_at=1)
losses, scales, iterations = [], [], []
for step in range(4):
    losses.append(number(_replicated_step(x[step : step + 1], y[step : step + 1], step == 0)))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
