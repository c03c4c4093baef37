"""fit under the mixed_float16 global policy with a legacy SGD (momentum) on a step-keyed
learning-rate schedule, as TF 2.11-2.15 code kept its optimizer on `tf.keras.optimizers.legacy`.

Pattern: google/automl@17c4cac0d7601de879d9f3d57f3590c11b7af240, efficientdet/keras/train_lib.py
(a warm-up then a drop keyed on the optimizer's step, given to the optimizer that `model.compile`
wraps under the 'mixed_float16' policy, then `model.fit`), with the optimizer built as
`tf.keras.optimizers.legacy.SGD(..., momentum=...)` (issue 32). No loss-scale name in the code.
The targets overflow float16 at the initial scale, so the first steps are skipped while the scale
halves; TF 2.15 counts them in `iterations`, which the schedule reads.
"""

import tensorflow as tf

from common import number, overflowing_data, report, set_starting_weights, weights


class WarmupThenDrop(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __call__(self, step):
        warm = 2**-8 * (1.0 + tf.cast(step, tf.float32))
        return tf.where(step < 6, warm, 2**-9)


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
set_starting_weights(model)
optimizer = tf.keras.optimizers.legacy.SGD(learning_rate=WarmupThenDrop(), momentum=0.5)
model.compile(loss="mse", optimizer=optimizer)
x, y = overflowing_data(steps=10)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.keras.mixed_precision.set_global_policy("float32")

report(losses=record.losses, iterations=record.iterations, weights=weights(model))
