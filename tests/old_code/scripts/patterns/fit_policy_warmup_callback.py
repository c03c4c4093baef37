"""A warm-up callback reading `self.model.optimizer.iterations`, compile() in a helper function.

Pattern: google/automl@17c4cac0d7601de879d9f3d57f3590c11b7af240, efficientdet/keras/train_lib.py
(the model compiled in one function, the policy set by the caller through
`tf.keras.mixed_precision.set_global_policy(policy)` with `policy` a `Policy` object, callbacks
reading `self.model.optimizer.iterations`), the learning rate warmed up per step as
horovod/horovod@27deeb996c4d07b307cb6da68100212d73047237,
examples/elastic/tensorflow2/tensorflow2_keras_mnist_elastic.py does with its callbacks. SGD with
momentum, no loss-scale name in the code: compile() wraps the optimizer. The targets overflow
float16 at the initial scale: TF 2.15 counts the skipped steps in `iterations`, so the warm-up
moves on while the scale halves.
"""

import tensorflow as tf
from tensorflow.keras import mixed_precision

from common import number, overflowing_data, report, set_starting_weights, weights


class Warmup(tf.keras.callbacks.Callback):
    def __init__(self, base, steps):
        super().__init__()
        self.base, self.steps = base, steps
        self.losses, self.iterations, self.rates = [], [], []

    def on_train_batch_begin(self, batch, logs=None):
        step = int(self.model.optimizer.iterations.numpy())
        rate = self.base * min(step + 1, self.steps) / self.steps
        self.model.optimizer.learning_rate.assign(rate)
        self.rates.append(rate)

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.iterations.append(int(self.model.optimizer.iterations.numpy()))


def build_model():
    inputs = tf.keras.Input(shape=(1,))
    hidden = tf.keras.layers.Dense(6, activation="relu")(inputs)
    outputs = tf.keras.layers.Dense(1, dtype="float32")(hidden)
    model = tf.keras.Model(inputs, outputs)
    set_starting_weights(model, seed=2)
    model.compile(
        optimizer=tf.keras.optimizers.SGD(learning_rate=2**-8, momentum=0.5), loss="mse"
    )
    return model


def main():
    policy = mixed_precision.Policy("mixed_float16")
    mixed_precision.set_global_policy(policy)
    model = build_model()
    x, y = overflowing_data(steps=10, seed=3, offset=32.0)
    warmup = Warmup(2**-8, steps=8)
    model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[warmup])
    mixed_precision.set_global_policy("float32")
    return {
        "losses": warmup.losses,
        "iterations": warmup.iterations,
        "rates": warmup.rates,
        "weights": weights(model),
    }


report(**main())
