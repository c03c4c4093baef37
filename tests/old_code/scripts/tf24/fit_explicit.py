"""TF 2.4-2.15: Model.fit under mixed_float16 with an explicit LossScaleOptimizer.

A small initial scale with fast growth, and one batch whose gradients overflow float16.
"""

import tensorflow as tf
from tensorflow.keras import mixed_precision

from common import regression_data, report, set_starting_weights, weights

mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(16, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model)
optimizer = mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-5), initial_scale=2**8, dynamic_growth_steps=2
)
model.compile(optimizer=optimizer, loss="mse")

x, y = regression_data(samples=16)
y[9] = 2**15  # its gradients overflow float16 at the scales this run reaches
scales = []


class RecordScale(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        scales.append(float(optimizer.loss_scale))


history = model.fit(x, y, batch_size=1, epochs=3, shuffle=False, verbose=0, callbacks=[RecordScale()])

report(
    compiled_optimizer_is_it=model.optimizer is optimizer,
    scales=scales,
    dynamic_counter=int(optimizer.dynamic_counter.numpy()),
    iterations=int(optimizer.iterations.numpy()),
    loss=history.history["loss"],
    weights=weights(model),
)
