"""train_on_batch with Adam on a decay schedule and a fixed loss scale given to compile().

The TF 2.4-2.15 twin of tf21/train_on_batch_policy_loss_scale.py.
Pattern: mlcommons/training@a0671ab8c9668d4acf86977ad6c9d36995431197,
image_classification/tensorflow2/tf2_common/modeling/performance.py (a fixed `loss_scale` for
the 'mixed_float16' policy), written the TF 2.4-2.15 way:
`tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False, initial_scale=128)` given to
`model.compile`. The targets overflow float16 at the default initial scale 2**15 but not at 128;
the loop reads `model.optimizer.iterations`.
"""

import tensorflow as tf

from common import number, overflowing_data, report, set_starting_weights, weights

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(8, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model, seed=8)
schedule = tf.keras.optimizers.schedules.ExponentialDecay(2**-5, decay_steps=4, decay_rate=0.5)
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.Adam(learning_rate=schedule), dynamic=False, initial_scale=128
)
model.compile(optimizer=optimizer, loss="mse")
x, y = overflowing_data(steps=8, seed=9, offset=96.0)
losses, iterations = [], []
for i in range(8):
    # The loss before the step, computed here: Keras 3.0's train_on_batch reports its loss
    # tracker's mean, which differs from TF 2.15's in the last bits at some steps.
    losses.append(number(tf.reduce_mean(tf.square(model(x[i : i + 1]) - y[i : i + 1]))))
    model.train_on_batch(x[i : i + 1], y[i : i + 1])
    iterations.append(int(model.optimizer.iterations.numpy()))
tf.keras.mixed_precision.set_global_policy("float32")

report(losses=losses, iterations=iterations, weights=weights(model))
