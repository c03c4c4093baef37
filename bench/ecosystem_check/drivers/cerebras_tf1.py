"""Trial driver for Cerebras/modelzoo (modelzoo/common/tf/optimizers/Trainer.py and
LossScale.py): the repository's TF1 trainer as its Estimator model functions use it, in a
tf.compat.v1 graph: Trainer(params, mixed_precision=True).build_train_ops(loss) wraps a
tf.compat.v1 optimizer in its own MixedPrecisionLossScaleOptimizer subclass with its dynamic
loss scale (a tf.compat.v1 DynamicLossScale subclass), then a session runs the train op.

Seeded synthetic regression data, a float16 layer; the third batch's inputs are large enough
that the scaled float16 gradients overflow (skip and halve). Run: python cerebras_tf1.py [DIR]
"""

import _trial_stubs as _stubs

_stubs.root()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

from modelzoo.common.tf.optimizers.Trainer import Trainer  # noqa: E402

STEPS = 6
tf.compat.v1.set_random_seed(0)
x = tf.compat.v1.placeholder(tf.float32, (16, 8))
y = tf.compat.v1.placeholder(tf.float32, (16, 1))
kernel = tf.compat.v1.get_variable("kernel", (8, 1), tf.float32)
pred = tf.cast(tf.matmul(tf.cast(x, tf.float16), tf.cast(kernel, tf.float16)), tf.float32)
loss = tf.reduce_mean((pred - y) ** 2)
trainer = Trainer(
    {"optimizer_type": "sgd", "learning_rate": 0.01, "loss_scaling_factor": "dynamic"},
    mixed_precision=True,
)
train_op = trainer.build_train_ops(loss)

rng = np.random.default_rng(0)
with tf.compat.v1.Session() as session:
    session.run(tf.compat.v1.global_variables_initializer())
    for step in range(STEPS):
        xs = rng.normal(size=(16, 8)).astype("float32") * (300.0 if step == 2 else 1.0)
        ys = rng.normal(size=(16, 1)).astype("float32")
        _, value = session.run([train_op, loss], {x: xs, y: ys})
        print(step, value)
