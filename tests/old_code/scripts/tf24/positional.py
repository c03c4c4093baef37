"""TF 2.4-2.15: the constructor's arguments passed positionally, as much code of that era did."""

import tensorflow as tf

from common import regression_data, report, set_starting_weights, weights
from tensorflow.keras.mixed_precision import LossScaleOptimizer

fixed = LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-5), False, 128)
dynamic = LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-5), True, 1024, 500)
short_growth = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-5), True, 4, 2
)


def describe(optimizer):
    return {
        "dynamic": optimizer.dynamic,
        "initial_scale": float(optimizer.initial_scale),
        "dynamic_growth_steps": optimizer.dynamic_growth_steps,
        "loss_scale": float(optimizer.loss_scale),
    }


tf.keras.mixed_precision.set_global_policy("mixed_float16")
x, y = regression_data(samples=16)
results = {}
for name, optimizer in [("fixed", fixed), ("dynamic", dynamic), ("short_growth", short_growth)]:
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(16, activation="relu", input_shape=(1,)),
            tf.keras.layers.Dense(1, dtype="float32"),
        ]
    )
    set_starting_weights(model)
    model.compile(optimizer=optimizer, loss="mse")
    history = model.fit(x, y, batch_size=1, epochs=2, shuffle=False, verbose=0)
    results[name] = {
        **describe(optimizer),
        "compiled_optimizer_is_it": model.optimizer is optimizer,
        "loss": history.history["loss"],
        "iterations": int(optimizer.iterations.numpy()),
        "weights": weights(model),
    }

report(**results)
