"""A wrap-only loop under MirroredStrategy over two logical CPUs, configured after
`import tensorflow` (the audit must not start TensorFlow's runtime before that); the second of
three steps has inf gradients and is skipped on both replicas together.

Each replica traces the step in a thread of its own: the record at apply_gradients is counted
per replica (2 x 3); the skip is decided once per step, at the strategy.run line.
"""

import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    var = tf.Variable(1.0)
    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))


def replica_step(x):
    with tf.GradientTape() as tape:
        loss = var * x
    grads = tape.gradient(loss, [var])
    opt.apply_gradients(zip(grads, [var]))  # audit: unscaled-gradients x6


@tf.function
def step(x):
    strategy.run(replica_step, args=(x,))  # audit: skipped-step x1


for x in (1.0, float("inf"), 1.0):
    step(tf.constant(x))
print("RESULT", {"var": float(var.numpy()), "iterations": int(opt.iterations.numpy())})
