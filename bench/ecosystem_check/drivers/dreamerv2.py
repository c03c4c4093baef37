"""Trial driver for danijar/dreamerv2 (dreamerv2/common/tfutils.py): the repository's trainer
class `Optimizer` (one module), driven from another module as its agent does: a tape, a float32
loss and the modules whose variables it trains, inside a tf.function, with mixed_float16.

The loss scale optimizer is built inside the class under a mixed_float16 global policy, scales
the loss, unscales the gradients, clips them and applies them. Seeded synthetic regression data;
step 3's inputs are large enough that the scaled float16 gradients overflow (skip and halve).
The package's __init__ imports gym, ruamel and tensorflow_probability, which the class does
not use: the driver imports tfutils.py alone. Run: python dreamerv2.py [SNAPSHOT_DIR]
"""

import os
import sys

import _trial_stubs as _stubs

ROOT = _stubs.root()
sys.path.insert(0, os.path.join(ROOT, "dreamerv2", "common"))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.keras.mixed_precision.set_global_policy("mixed_float16")

import tfutils  # noqa: E402

STEPS = 6
model = tf.keras.Sequential(
    [tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)]
)
optimizer = tfutils.Optimizer("model", 1e-3, eps=1e-5, clip=100, wd=0.0)


@tf.function
def train(x, y):
    with tf.GradientTape() as tape:
        pred = tf.cast(model(x), tf.float32)
        loss = tf.reduce_mean((pred - y) ** 2)
    return optimizer(tape, loss, [model])


rng = np.random.default_rng(0)
for step in range(STEPS):
    x = rng.normal(size=(32, 8)).astype("float32") * (100.0 if step == 2 else 1.0)
    y = rng.normal(size=(32, 1)).astype("float32")
    metrics = train(tf.constant(x), tf.constant(y))
    print(step, {k: float(v) for k, v in metrics.items()})
