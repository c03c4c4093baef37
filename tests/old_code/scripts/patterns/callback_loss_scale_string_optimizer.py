"""fit with an optimizer named by a string under mixed_float16; a callback reads the scale state.

Pattern: keras-team/keras@601488fd4c1468ae7872e132e0f1c9843df54182,
keras/mixed_precision/model_test.py (Keras 2.15's `test_compile_wraps_with_loss_scale_optimizer`:
under the mixed_float16 policy `model.compile("sgd", "mse")` wraps the optimizer named by the
string in a loss scale optimizer, and `model.optimizer.loss_scale` / `dynamic_counter` are read
as in its `test_save_weights_with_dynamic_loss_scaling`), the policy set with
`set_global_policy` and the state read in a callback after each batch. An inf sample at step 3.
The policy is set back to float32 at the end.
"""

import tensorflow as tf

from common import data, number, report, set_starting_weights, weights


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.scales, self.counters = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.scales.append(float(self.model.optimizer.loss_scale))
        self.counters.append(int(self.model.optimizer.dynamic_counter.numpy()))


tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(4, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model, seed=3)
model.compile("sgd", "mse")
x, y = data(steps=4, inf_at=2, seed=4)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.keras.mixed_precision.set_global_policy("float32")

report(
    losses=record.losses,
    scales=record.scales,
    dynamic_counters=record.counters,
    iterations=int(model.optimizer.iterations.numpy()),
    weights=weights(model),
)
