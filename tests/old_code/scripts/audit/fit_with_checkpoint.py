"""Model.fit with ModelCheckpoint(save_weights_only=True) and CSVLogger: Keras's
weight saving reads the optimizer's attributes (`loss_scale` and `dynamic_counter` among them,
Keras 2 forms that Keras 3's own class lacks), which the user's code never wrote: no record at
the fit line. The user's own reads after it are recorded.
"""

import os
import tempfile

import numpy as np
import tensorflow as tf

x = np.linspace(-1.0, 1.0, 16, dtype=np.float32).reshape(8, 2)
y = x.sum(axis=1, keepdims=True)
model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
model.compile(optimizer=opt, loss="mse")
with tempfile.TemporaryDirectory() as folder:
    callbacks = [
        tf.keras.callbacks.ModelCheckpoint(
            os.path.join(folder, "w.weights.h5"), save_weights_only=True
        ),
        tf.keras.callbacks.CSVLogger(os.path.join(folder, "log.csv")),
    ]
    model.fit(x, y, batch_size=4, epochs=2, verbose=0, callbacks=callbacks)
    model.load_weights(os.path.join(folder, "w.weights.h5"))
print("RESULT", {"scale": float(opt.loss_scale)})  # audit: keras2-form loss_scale x1
print("counter", int(opt.dynamic_counter.numpy()))  # audit: keras2-form dynamic_counter x1
