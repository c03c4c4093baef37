"""Two groups of gradients unscaled by two get_unscaled_gradients calls in a step function that
returns them; its caller applies them.

Pattern: NVIDIA-Merlin/HugeCTR@2a310d4dfef1de512bd3030a62ef120baea00e71,
sparse_operation_kit/unit_test/test_scripts/tf1/test_sparse_emb_demo.py (`_step_fn`: the
gradients of `emb_opt.get_scaled_loss(loss)` split into embedding and dense ones, each
`emb_opt.get_unscaled_gradients(...)`), returned as in mlcommons/training@
a0671ab8c9668d4acf86977ad6c9d36995431197, image_classification/tensorflow2/resnet_runnable.py
(`local_step` returns `logits, loss, grads`; `step_fn` applies them). Here one optimizer applies
both groups in one call (SOK's embedding optimizer is not Keras's). Dynamic scale, inf samples
(in float16) at steps 3 and 8: skipped, the scale halves.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-6))
first = model.layers[0].trainable_variables
other = model.layers[1].trainable_variables


@tf.function
def train_step(inputs, labels):
    def _step_fn(inputs, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(inputs, training=True) - labels))
            scaled_loss = optimizer.get_scaled_loss(loss)
        grads = tape.gradient(scaled_loss, first + other)
        emb_grads, other_grads = grads[: len(first)], grads[len(first) :]
        other_grads = optimizer.get_unscaled_gradients(other_grads)
        emb_grads = optimizer.get_unscaled_gradients(emb_grads)
        return loss, emb_grads, other_grads

    loss, emb_grads, other_grads = _step_fn(inputs, labels)
    optimizer.apply_gradients(zip(emb_grads + other_grads, first + other))
    return loss


x, y = data(steps=12, inf_at=3)
x[8, 0] = 1e30
losses, scales, iterations = [], [], []
for i in range(12):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
