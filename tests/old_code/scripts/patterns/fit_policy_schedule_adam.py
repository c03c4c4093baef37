"""fit under the mixed_float16 global policy with Adam on a step-keyed learning-rate schedule.

Pattern: google/automl@17c4cac0d7601de879d9f3d57f3590c11b7af240, efficientdet/keras/train_lib.py
(`StepwiseLrSchedule(tf.optimizers.schedules.LearningRateSchedule)`, a warm-up then drops keyed
on the optimizer's step, given to the optimizer that `model.compile` wraps under the
'mixed_float16' policy set by `set_global_policy`, then `model.fit`). No loss-scale name in the
code: compile() wraps the optimizer. The targets overflow float16 at the initial scale, so the
first steps are skipped while the scale halves; TF 2.15 counts them in `iterations`, which the
schedule and Adam's bias correction read.
"""

import tensorflow as tf

from common import number, overflowing_data, report, set_starting_weights, weights


class StepwiseLrSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, adjusted_lr, lr_warmup_init, lr_warmup_step, first_lr_drop_step):
        super().__init__()
        self.adjusted_lr = adjusted_lr
        self.lr_warmup_init = lr_warmup_init
        self.lr_warmup_step = lr_warmup_step
        self.first_lr_drop_step = first_lr_drop_step

    def __call__(self, step):
        linear_warmup = self.lr_warmup_init + (
            tf.cast(step, dtype=tf.float32)
            / self.lr_warmup_step
            * (self.adjusted_lr - self.lr_warmup_init)
        )
        learning_rate = tf.where(step < self.lr_warmup_step, linear_warmup, self.adjusted_lr)
        return tf.where(
            step < self.first_lr_drop_step, learning_rate, self.adjusted_lr * 0.125
        )


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
learning_rate = StepwiseLrSchedule(2**-4, 2**-6, lr_warmup_step=8, first_lr_drop_step=10)
model.compile(loss="mse", optimizer=tf.keras.optimizers.Adam(learning_rate=learning_rate))
x, y = overflowing_data(steps=12)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.keras.mixed_precision.set_global_policy("float32")

report(losses=record.losses, iterations=record.iterations, weights=weights(model))
