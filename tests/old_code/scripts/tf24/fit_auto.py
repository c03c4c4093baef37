"""TF 2.4-2.15: Model.fit under mixed_float16 with no loss scale optimizer in the code.

compile() wraps the optimizer itself (dynamic, 2**15, growth every 2000 steps); one batch's
gradients overflow float16, so that step is skipped and the scale halves.
"""

import tensorflow as tf

from common import regression_data, report, set_starting_weights, weights

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(16, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(model)
model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=2**-5), loss="mse")

x, y = regression_data()
y[20] = 2**12  # scaled by 2**15, its gradient overflows float16 in the first layer's backward pass
history = model.fit(x, y, batch_size=1, epochs=3, shuffle=False, verbose=0)
optimizer = model.optimizer

report(
    is_loss_scale_optimizer=isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer),
    dynamic=optimizer.dynamic,
    initial_scale=float(optimizer.initial_scale),
    dynamic_growth_steps=optimizer.dynamic_growth_steps,
    loss_scale=float(optimizer.loss_scale),
    dynamic_counter=int(optimizer.dynamic_counter.numpy()),
    iterations=int(optimizer.iterations.numpy()),
    loss=history.history["loss"],
    weights=weights(model),
)
