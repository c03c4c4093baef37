"""A custom loop over `model.train_on_batch`, the policy set behind a flag, an iteration-keyed decay.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow2/Segmentation/UNet_Medical/runtime/setup.py (`if params.use_amp:` sets the
'mixed_float16' policy) with the model compiled and stepped by the caller, here with
`train_on_batch` as the Keras FAQ's custom loops do, SGD with Nesterov momentum on an
`ExponentialDecay(staircase=True)` schedule. No loss-scale name in the code: compile() wraps the
optimizer. The targets overflow float16 at the initial scale, and one sample is inf; the loop
reads `model.optimizer.iterations` after each step.
"""

import tensorflow as tf

from common import number, overflowing_data, report, set_starting_weights, weights

USE_AMP = True

if USE_AMP:
    tf.keras.mixed_precision.set_global_policy("mixed_float16")

model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(3, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model, seed=4)
schedule = tf.keras.optimizers.schedules.ExponentialDecay(
    2**-6, decay_steps=3, decay_rate=0.5, staircase=True
)
model.compile(
    optimizer=tf.keras.optimizers.SGD(learning_rate=schedule, momentum=0.25, nesterov=True),
    loss="mse",
)
x, y = overflowing_data(steps=10, seed=5, offset=48.0)
x[7, 0] = 1e30  # inf in float16: that step's gradients are not finite
losses, iterations = [], []
for i in range(10):
    model.reset_metrics()  # Keras 3.0 returns the mean over the calls since the last reset
    losses.append(number(model.train_on_batch(x[i : i + 1], y[i : i + 1])))
    iterations.append(int(model.optimizer.iterations.numpy()))
tf.keras.mixed_precision.set_global_policy("float32")

report(losses=losses, iterations=iterations, weights=weights(model))
