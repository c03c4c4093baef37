"""TF 2.1-2.3 experimental API: the policy set by name in a helper, compile(), train_on_batch.

Pattern: google/automl@0f22ed5570a532945ca0bd5f73814e8d89701685, efficientdet/utils.py
(`set_precision_policy(policy_name, loss_scale)`: `experimental.Policy(policy_name)` or
`Policy(policy_name, loss_scale=None)`, then `experimental.set_policy(policy)`; the name known
only at run time), with the model compiled and stepped by `train_on_batch` on an
`ExponentialDecay(staircase=True)` schedule. The same program as
../train_on_batch_policy_decay.py (TF215_TWIN), whose TF 2.15 numbers are this script's reference.
"""

import tensorflow as tf

from common import number, overflowing_data, report, set_starting_weights, weights

TF215_TWIN = "train_on_batch_policy_decay.py"  # the TF 2.4-2.15 spelling, one folder up


def set_precision_policy(policy_name=None, loss_scale=False):
    """Set precision policy according to the name (automl's, its logging left out)."""
    if not policy_name:
        return
    assert policy_name in ("mixed_float16", "mixed_bfloat16", "float32")
    if loss_scale:
        policy = tf.keras.mixed_precision.experimental.Policy(policy_name)
    else:
        policy = tf.keras.mixed_precision.experimental.Policy(policy_name, loss_scale=None)
    tf.keras.mixed_precision.experimental.set_policy(policy)


set_precision_policy("mixed_float16", loss_scale=True)

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
set_precision_policy("float32")

report(losses=losses, iterations=iterations, weights=weights(model))
