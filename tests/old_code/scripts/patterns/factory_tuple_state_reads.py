"""The optimizer comes from a function, unpacked with the model; the loop logs its loss scale.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947, TensorFlow2/LanguageModeling/ELECTRA/run_tf_squad.py
(`opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")` made in
main(), handed to `train_step(model, inputs, loss, amp, opt, ...)` as a parameter, which calls
`opt.get_scaled_loss` / `opt.get_unscaled_gradients` / `opt.apply_gradients`; the loop logs
`opt.loss_scale` after each step). Here a `build()` returns `(model, scaler)`, as factories
do (issue 32: the codemod must follow the optimizer through the return and the unpacking, and
through the step's parameter). Growth every 2 steps, an inf step at step 3.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights


def build():
    net = small_model()
    inner = tf.keras.optimizers.SGD(learning_rate=2**-4)
    scaler = tf.keras.mixed_precision.LossScaleOptimizer(
        inner, initial_scale=2**7, dynamic_growth_steps=2
    )
    return net, scaler


@tf.function
def train_step(net, scaler, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(net(x) - y))
        scaled = scaler.get_scaled_loss(loss)
    gradients = scaler.get_unscaled_gradients(tape.gradient(scaled, net.trainable_variables))
    scaler.apply_gradients(zip(gradients, net.trainable_variables))
    return loss


net, scaler = build()
x, y = data(steps=6, inf_at=2)
losses, scales, counters, iterations = [], [], [], []
for i in range(6):
    losses.append(number(train_step(net, scaler, x[i : i + 1], y[i : i + 1])))
    scales.append(float(scaler.loss_scale))
    counters.append(int(scaler.dynamic_counter.numpy()))
    iterations.append(int(scaler.iterations.numpy()))

report(
    losses=losses,
    scales=scales,
    dynamic_counters=counters,
    iterations=iterations,
    weights=weights(net),
)
