"""A fixed scale, a scale that cannot double further, and gradients unscaled but never scaled.

All inside tf.function: recorded at trace time, counted per step.
"""

import tensorflow as tf

var = tf.Variable(1.0)
fixed = tf.keras.mixed_precision.LossScaleOptimizer(  # audit: fixed-scale x1
    tf.keras.optimizers.SGD(0.1), dynamic=False, initial_scale=8.0
)
at_the_top = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(0.1), initial_scale=2.0**127, dynamic_growth_steps=1
)


@tf.function
def fixed_step():
    with tf.GradientTape() as tape:
        loss = fixed.get_scaled_loss(var * 2.0)  # audit: keras2-form get_scaled_loss x2
    grads = fixed.get_unscaled_gradients(tape.gradient(loss, [var]))  # audit: keras2-form get_unscaled_gradients x2
    fixed.apply_gradients(zip(grads, [var]))


@tf.function
def unscaled_twice_step():
    with tf.GradientTape() as tape:
        loss = var * 2.0
    grads = at_the_top.get_unscaled_gradients(tape.gradient(loss, [var]))  # audit: keras2-form get_unscaled_gradients x2
    at_the_top.apply_gradients(zip(grads, [var]))  # audit: unscaled-twice x2, growth-cap x2


for _ in range(2):
    fixed_step()
    unscaled_twice_step()
print("RESULT", {"scale": float(at_the_top.dynamic_scale.numpy()), "var": float(var)})
