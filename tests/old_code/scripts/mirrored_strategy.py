"""TF 2.3 style: MirroredStrategy over two logical CPU devices, Model.fit, an experimental LSO."""

import tensorflow as tf

from common import regression_data, report, weights_digest

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(16, activation="relu", input_shape=(8,)), tf.keras.layers.Dense(1)]
    )
    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.05), loss_scale=tf.mixed_precision.experimental.DynamicLossScale(256, 2)
    )
    model.compile(optimizer=optimizer, loss="mse")

x, y = regression_data()
history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
report(
    loss=history.history["loss"],
    loss_scale=float(optimizer.loss_scale()),
    iterations=int(optimizer.iterations.numpy()),
    weights=weights_digest(model),
)
