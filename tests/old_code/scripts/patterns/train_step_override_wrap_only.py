"""A train_step override with plain gradients, compiled under mixed_float16: wrap-only via compile.

Pattern: keras-team/keras-io@ad4fc805f5e1a4a4c0bcdd416aa9feac6608fb6c,
guides/customizing_what_happens_in_fit.py (`CustomModel.train_step`: `gradients =
tape.gradient(loss, trainable_vars)`, `self.optimizer.apply_gradients(zip(gradients,
trainable_vars))`), the model built under the mixed_float16 global policy, so that Keras 2's
`compile` wraps the optimizer in a loss scale optimizer that the step never asks to scale.
Keras 2 applies the gradients as they are. An inf sample at step 2.
"""

import tensorflow as tf

from common import data, number, report, set_starting_weights, weights


class CustomModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(4, activation="relu")
        self.head = tf.keras.layers.Dense(1, dtype="float32")

    def call(self, inputs):
        return self.head(self.hidden(inputs))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(y_pred - y))
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        return {"loss": loss}


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.scales, self.iterations = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.scales.append(float(self.model.optimizer.loss_scale))
        self.iterations.append(int(self.model.optimizer.iterations.numpy()))


tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = CustomModel()
model(tf.zeros((1, 1)))  # builds the layers (Keras 3's build() of a subclass does not)
set_starting_weights(model)
model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=2**-4))
x, y = data(steps=4, inf_at=1)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.keras.mixed_precision.set_global_policy("float32")

report(losses=record.losses, scales=record.scales, iterations=record.iterations, weights=weights(model))
