"""Steps skipped at a loss scale of 2 and of 1.5, eagerly.

Keras 2's rule halves a skipped step's scale to max(scale / 2, 1), Keras 3's to scale / 2: at 2
both give 1 (nothing to record), at 1.5 Keras 2 gives 1 and Keras 3 0.75 (the scale-floor
record). Worked out by hand: one optimizer skips at 4 and at 2, the other at 1.5.
"""

import tensorflow as tf

var = tf.Variable(1.0)
at_two = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(0.1), initial_scale=4.0, dynamic_growth_steps=100
)
at_one_and_a_half = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(0.1), initial_scale=1.5, dynamic_growth_steps=100
)


def step(opt, x):
    with tf.GradientTape() as tape:
        loss = opt.get_scaled_loss(var * x)  # audit: keras2-form get_scaled_loss x3
    scaled = tape.gradient(loss, [var])
    grads = opt.get_unscaled_gradients(scaled)  # audit: keras2-form get_unscaled_gradients x3
    opt.apply_gradients(zip(grads, [var]))  # audit: skipped-step x3, scale-floor x1


for opt, skips in ((at_two, 2), (at_one_and_a_half, 1)):
    for _ in range(skips):
        step(opt, tf.constant(float("inf")))
scales = at_two.loss_scale, at_one_and_a_half.loss_scale  # audit: keras2-form loss_scale x2
print("RESULT", [float(scale) for scale in scales])
