"""fit with a fixed loss scale given to compile(): the TF 2.4-2.15 twin of tf21/fit_policy_loss_scale.py.

Pattern: mlcommons/training@a0671ab8c9668d4acf86977ad6c9d36995431197,
image_classification/tensorflow2/tf2_common/modeling/performance.py (a fixed `loss_scale` for
the 'mixed_float16' policy), written the TF 2.4-2.15 way: the policy without a loss scale and
`tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False, initial_scale=1024)` given to
`model.compile`, which keeps it. The targets overflow float16 at the default initial scale 2**15
but not at 1024, so a fixed scale trains from the first step (a fixed scale applies
non-finite gradients too, so no sample here is inf).
"""

import tensorflow as tf

from common import number, overflowing_data, report, set_starting_weights, weights


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.iterations = [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.iterations.append(int(self.model.optimizer.iterations.numpy()))


tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(4, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model, seed=6)
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-9), dynamic=False, initial_scale=1024
)
model.compile(optimizer=optimizer, loss="mse")
x, y = overflowing_data(steps=8, seed=7, offset=16.0)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.keras.mixed_precision.set_global_policy("float32")

report(losses=record.losses, iterations=record.iterations, weights=weights(model))
