"""fit under the mixed_float16 global policy: compile wraps the optimizer; model.optimizer read.

Pattern: tensorflow/docs@945a448704b25a0897ed24abd45ab4d0b0d6f3c2, site/en/guide/mixed_precision.ipynb
(`mixed_precision.set_global_policy('mixed_float16')`, a float32 output layer, `model.compile(...,
optimizer=keras.optimizers.RMSprop())`, then `model.fit`), with the loss scale read from
`model.optimizer` as google/automl@17c4cac0d7601de879d9f3d57f3590c11b7af240,
efficientdet/keras/train_lib.py reads `self.model.optimizer.iterations`. The policy is set back
to float32 at the end. An inf sample at step 2.
"""

import tensorflow as tf

from common import data, number, report, set_starting_weights, weights


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.scales, self.iterations = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.scales.append(float(self.model.optimizer.loss_scale))
        self.iterations.append(int(self.model.optimizer.iterations.numpy()))


tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(4, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model)
model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(learning_rate=2**-4))
x, y = data(steps=4, inf_at=1)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.keras.mixed_precision.set_global_policy("float32")

report(
    is_loss_scale_optimizer=isinstance(model.optimizer, tf.keras.mixed_precision.LossScaleOptimizer),
    losses=record.losses,
    scales=record.scales,
    iterations=record.iterations,
    weights=weights(model),
)
