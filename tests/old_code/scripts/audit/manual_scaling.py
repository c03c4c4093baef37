"""TF 2.4's manual loop, eagerly: get_scaled_loss / get_unscaled_gradients, minimize, loss_scale.

A scale of 1 from the start: the inf steps hit Keras 2's floor (Keras 3 would go to 0.5).
"""

import tensorflow as tf

var = tf.Variable(1.0)
opt = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(0.1), initial_scale=1.0, dynamic_growth_steps=100
)


def step(x):
    with tf.GradientTape() as tape:
        loss = var * x
        scaled = opt.get_scaled_loss(loss)  # audit: keras2-form get_scaled_loss x4
    grads = tape.gradient(scaled, [var])
    grads = opt.get_unscaled_gradients(grads)  # audit: keras2-form get_unscaled_gradients x4
    opt.apply_gradients(zip(grads, [var]))  # audit: skipped-step x2, scale-floor x2


for x in (1.0, float("inf"), 1.0, float("inf")):
    step(tf.constant(x))
opt.minimize(lambda: var * 2.0, [var])  # audit: keras2-form minimize x1
print("RESULT", {"scale": float(opt.loss_scale), "iterations": int(opt.iterations.numpy())})  # audit: keras2-form loss_scale x1
