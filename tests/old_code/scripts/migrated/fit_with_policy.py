"""The migrated twin of fit_with_policy.py."""

import tensorflow as tf

import compat_lso
from common import regression_data, report, weights_digest

tf.keras.mixed_precision.set_global_policy("mixed_float16")

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(16, activation="relu", input_shape=(8,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
model.compile(optimizer=compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05)), loss="mse")
x, y = regression_data()
history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)

report(
    loss=history.history["loss"],
    loss_scale=float(model.optimizer.loss_scale),
    iterations=int(model.optimizer.iterations.numpy()),
    weights=weights_digest(model),
)
