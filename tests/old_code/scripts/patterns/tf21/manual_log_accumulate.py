"""TF 2.1-2.3 spelling: the loss scale optimizer made by a wrapper whose class is bound two ways.

Pattern: OpenNMT/OpenNMT-tf@cea9d9e366fcf33adb1797e93c8c2a2d9a057aa9, opennmt/training.py
(`_add_mixed_precision_wrapper`: `wrapper_class` is TF 2.4's class where `compat.tf_supports`
finds it, else the experimental class with `wrapper_kwargs = dict(loss_scale="dynamic")`, then
`if not isinstance(optimizer, wrapper_class): optimizer = wrapper_class(optimizer,
**wrapper_kwargs)`); here the feature detection answers as on TF 2.1-2.3, so the experimental
branch runs. The same program as ../manual_log_accumulate.py (TF215_TWIN), whose TF 2.15
numbers are this script's reference.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

TF215_TWIN = "manual_log_accumulate.py"  # the TF 2.4-2.15 spelling of this program, one folder up


def tf_supports(symbol):
    return False  # opennmt.utils.compat.tf_supports on TF 2.1-2.3: no non-experimental class


def _add_mixed_precision_wrapper(optimizer):
    wrapper_class = None
    wrapper_kwargs = {}
    if tf_supports("keras.mixed_precision.LossScaleOptimizer"):
        wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer
    else:
        wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer
        wrapper_kwargs = dict(loss_scale="dynamic")
    if not isinstance(optimizer, wrapper_class):
        optimizer = wrapper_class(optimizer, **wrapper_kwargs)
    return optimizer


model = small_model()
optimizer = _add_mixed_precision_wrapper(tf.keras.optimizers.SGD(learning_rate=2**-4))
variables = model.trainable_variables


@tf.function
def step(x, y):
    total, norms, losses = None, [], []
    for micro in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x[micro : micro + 1], training=True) - y[micro : micro + 1]))
            training_loss = optimizer.get_scaled_loss(loss)
        gradients = tape.gradient(training_loss, variables)
        gradients = optimizer.get_unscaled_gradients(gradients)
        norms.append(tf.linalg.global_norm(gradients))
        losses.append(loss)
        total = gradients if total is None else [a + g for a, g in zip(total, gradients)]
    optimizer.apply_gradients(zip(total, variables))
    return losses, norms


x, y = data(steps=8, inf_at=2)
losses, norms, scales, iterations = [], [], [], []
for i in range(4):
    step_losses, step_norms = step(x[2 * i : 2 * i + 2], y[2 * i : 2 * i + 2])
    losses += [number(v) for v in step_losses]
    norms += [number(v) for v in step_norms]
    scales.append(float(optimizer.loss_scale()))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, norms=norms, scales=scales, iterations=iterations, weights=weights(model))
