"""Trial driver for eclipsesource/checkbox-detection-tf-models, a copy of tensorflow/models
(official/modeling/performance.py, official/utils/misc/keras_utils.py): the Model Garden's
helpers as its Keras compile/fit trainers use them: set_mixed_precision_policy(tf.float16) (the
experimental Policy and set_policy), configure_optimizer(..., use_float16=True) (the
experimental LossScaleOptimizer, loss_scale 'dynamic'), then compile() and fit() with the
library's TimeHistory callback and a Keras LearningRateScheduler.

Seeded synthetic classification data; the third batch's inputs are large enough that the scaled
float16 gradients overflow (skip and halve). Run: python tf_models_fit.py [SNAPSHOT_DIR]
"""

import _trial_stubs as _stubs

_stubs.root()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from official.modeling import performance  # noqa: E402
from official.utils.misc import keras_utils  # noqa: E402

STEPS = 6
BATCH = 16

performance.set_mixed_precision_policy(tf.float16)
model = tf.keras.Sequential(
    [
        tf.keras.Input((8,)),
        tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dense(4),
        tf.keras.layers.Activation("softmax", dtype="float32"),
    ]
)
optimizer = performance.configure_optimizer(
    tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9), use_float16=True
)
model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy")

rng = np.random.default_rng(0)
x = rng.normal(size=(STEPS * BATCH, 8)).astype("float32")
x[2 * BATCH : 3 * BATCH] *= 3000.0
y = rng.integers(0, 4, size=(STEPS * BATCH,)).astype("int32")
callbacks = [
    keras_utils.TimeHistory(BATCH, log_steps=2),
    tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5),
]
history = model.fit(x, y, batch_size=BATCH, epochs=1, callbacks=callbacks, verbose=2, shuffle=False)
print(history.history)
