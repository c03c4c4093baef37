"""A wrap-only custom loop (TF 2.4-2.15): the optimizer is wrapped, the loss is never scaled.

Keras 2's apply_gradients takes the gradients as they are; Keras 3's would divide them by 32768.
"""

import tensorflow as tf

var = tf.Variable([1.0, 2.0])
opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))


@tf.function
def train_step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(var**2)
    grads = tape.gradient(loss, [var])
    opt.apply_gradients(zip(grads, [var]))  # audit: unscaled-gradients x3
    return loss


for _ in range(3):
    train_step()
print("RESULT", {"var": var.numpy().tolist()})
