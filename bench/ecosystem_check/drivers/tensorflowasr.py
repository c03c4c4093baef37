"""Trial driver for TensorSpeech/TensorFlowASR (tensorflow_asr/models/base_model.py): the
repository's Keras Model subclass whose compile() wraps the optimizer in the experimental loss
scale optimizer and whose train_step scales the loss and unscales the gradients by hand, trained
by Model.fit under a tf.distribute strategy (MirroredStrategy on the CPU), as its runners do.

A small subclass supplies the layers (the repository's models are speech models). Seeded
synthetic regression data; the third batch's inputs are large enough that the scaled float16
gradients overflow (skip and halve). Run: python tensorflowasr.py [SNAPSHOT_DIR]
"""

import _trial_stubs as _stubs

_stubs.root()
_stubs.stub_missing("yaml")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.keras.mixed_precision.set_global_policy("mixed_float16")

from tensorflow_asr.models.base_model import BaseModel  # noqa: E402

STEPS = 6
BATCH = 16


class Tiny(BaseModel):
    def __init__(self):
        super().__init__(name="tiny")
        self.hidden = tf.keras.layers.Dense(16, activation="relu")
        self.out = tf.keras.layers.Dense(1, dtype="float32")

    def call(self, inputs, training=False):
        return self.out(self.hidden(inputs))


rng = np.random.default_rng(0)
x = rng.normal(size=(STEPS * BATCH, 8)).astype("float32")
x[2 * BATCH : 3 * BATCH] *= 300.0
y = rng.normal(size=(STEPS * BATCH, 1)).astype("float32")
data = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)

strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
with strategy.scope():
    model = Tiny()  # built by fit: Keras 3 refuses the metric compile() adds to a built model
    model.compile(loss=tf.keras.losses.MeanSquaredError(), optimizer="adam")
history = model.fit(data, epochs=1, steps_per_epoch=STEPS, verbose=2)
print(history.history)
