"""TF 2.1-2.3 experimental API: a module-level `Policy('mixed_float16', loss_scale=128)`, train_on_batch.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow2/Classification/ConvNets/efficientnet/utils/setup.py (`policy =
tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=...)` then
`set_policy(policy)`), through `from tensorflow.keras.mixed_precision import experimental as
mixed_precision`, with a fixed scale; compile() with Adam on a decay schedule, then
`train_on_batch`. The same program as ../train_on_batch_fixed_scale_adam.py (TF215_TWIN), whose
TF 2.15 numbers are this script's reference.
"""

import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

from common import number, overflowing_data, report, set_starting_weights, weights

TF215_TWIN = "train_on_batch_fixed_scale_adam.py"  # the TF 2.4-2.15 spelling, one folder up

policy = mixed_precision.Policy("mixed_float16", loss_scale=128)
mixed_precision.set_policy(policy)
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(8, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model, seed=8)
schedule = tf.keras.optimizers.schedules.ExponentialDecay(2**-5, decay_steps=4, decay_rate=0.5)
model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=schedule), loss="mse")
x, y = overflowing_data(steps=8, seed=9, offset=96.0)
losses, iterations = [], []
for i in range(8):
    # The loss before the step, computed here: Keras 3.0's train_on_batch reports its loss
    # tracker's mean, which differs from TF 2.15's in the last bits at some steps.
    losses.append(number(tf.reduce_mean(tf.square(model(x[i : i + 1]) - y[i : i + 1]))))
    model.train_on_batch(x[i : i + 1], y[i : i + 1])
    iterations.append(int(model.optimizer.iterations.numpy()))
mixed_precision.set_policy("float32")

report(losses=losses, iterations=iterations, weights=weights(model))
