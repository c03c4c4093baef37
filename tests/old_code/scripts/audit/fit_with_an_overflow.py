"""Model.fit under mixed_float16: compile() wraps the optimizer (TF 2.15's wrapping while
installed); one batch of four has an inf input, so one step is skipped.

Recorded at the fit call: the line that traced the step. Zero weights and targets of 0.25 keep
every other step's scaled gradients (2 * 0.25 * 32768) finite in float16.
"""

import numpy as np
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
model.compile(tf.keras.optimizers.SGD(0.01), loss="mse")
x = np.ones((4, 1), "float32")
x[2] = np.inf
y = np.full((4, 1), 0.25, "float32")
model.fit(x, y, batch_size=1, epochs=2, shuffle=False, verbose=0)  # audit: skipped-step x2
tf.keras.mixed_precision.set_global_policy("float32")
print("RESULT", {"iterations": int(model.optimizer.iterations.numpy()), "scale": float(model.optimizer.dynamic_scale.numpy())})
