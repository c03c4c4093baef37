"""MirroredStrategy (one CPU device): compile with a loss scale optimizer in the scope, then fit.

Pattern: google/automl@0f22ed5570a532945ca0bd5f73814e8d89701685, efficientdet/keras/train.py
(`ds_strategy = tf.distribute.MirroredStrategy()`, model and optimizer built in its scope, the
optimizer a loss scale optimizer when mixed precision is on, `model.fit`), in the TF 2.4
spelling of efficientdet/keras/train_lib.py at google/automl@17c4cac0d7601de879d9f3d57f3590c11b7af240
(`tf.keras.mixed_precision.LossScaleOptimizer(optimizer)`). An inf sample at step 3.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.scales, self.iterations = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.scales.append(float(self.model.optimizer.loss_scale))
        self.iterations.append(int(self.model.optimizer.iterations.numpy()))


ds_strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0"])
with ds_strategy.scope():
    model = small_model()
    optimizer = tf.keras.optimizers.SGD(learning_rate=2**-4)
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
    model.compile(optimizer=optimizer, loss="mse")
x, y = data(steps=4, inf_at=2)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])

report(losses=record.losses, scales=record.scales, iterations=record.iterations, weights=weights(model))
