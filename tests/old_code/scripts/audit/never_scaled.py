"""Gradients of a loss never scaled, divided by the scale all the same (doctr's pattern): the old
code's own bug, on Keras 2 too. Three steps in a tf.function, the default scale 2**15, SGD(1.0):
the gradient 2 is applied as 2 / 2**15 = 2**-14 each step (not 2): 1 - 3 * 2**-14 in the end.
"""

import tensorflow as tf

var = tf.Variable(1.0)
opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0))


@tf.function
def step():
    with tf.GradientTape() as tape:
        loss = var * 2.0
    grads = opt.get_unscaled_gradients(tape.gradient(loss, [var]))  # audit: keras2-form get_unscaled_gradients x3
    opt.apply_gradients(zip(grads, [var]))  # audit: unscaled-twice x3


for _ in range(3):
    step()
print("RESULT", {"var": float(var.numpy())})
