"""TF 2.1-2.3 experimental API: `Policy('mixed_float16', loss_scale=1024)`, compile(), fit().

Pattern: mlcommons/training@a0671ab8c9668d4acf86977ad6c9d36995431197,
image_classification/tensorflow2/tf2_common/modeling/performance.py
(`set_mixed_precision_policy(dtype, loss_scale)`: `experimental.Policy('mixed_float16',
loss_scale=loss_scale)` and `experimental.set_policy(policy)`), then compile() and fit(): TF
2.1-2.8's compile() wrapped the optimizer with the policy's fixed scale. The same program as
../fit_fixed_scale_compile.py (TF215_TWIN), whose TF 2.15 numbers are this script's reference.
"""

import tensorflow as tf

from common import number, overflowing_data, report, set_starting_weights, weights

TF215_TWIN = "fit_fixed_scale_compile.py"  # the TF 2.4-2.15 spelling of this program, one folder up


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.iterations = [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.iterations.append(int(self.model.optimizer.iterations.numpy()))




def set_mixed_precision_policy(dtype, loss_scale=None):
    """Sets mix precision policy (mlcommons', for float16 only)."""
    if dtype == tf.float16:
        policy = tf.keras.mixed_precision.experimental.Policy(
            "mixed_float16", loss_scale=loss_scale
        )
        tf.keras.mixed_precision.experimental.set_policy(policy)
    else:
        tf.keras.mixed_precision.experimental.set_policy("float32")


set_mixed_precision_policy(tf.float16, loss_scale=1024)
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(4, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model, seed=6)
model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=2**-9), loss="mse")
x, y = overflowing_data(steps=8, seed=7, offset=16.0)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
set_mixed_precision_policy(tf.float32)

report(losses=record.losses, iterations=record.iterations, weights=weights(model))
