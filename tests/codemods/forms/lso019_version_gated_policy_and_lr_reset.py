# LSO004/LSO006 in a version gate's old branch, compile() under the policy (LSO022, LSO023 on the
# shim), and LSO019: a reset callback that sets the learning rate of compile()'s wrapper.
import os
from distutils.version import LooseVersion

import horovod.tensorflow.keras as hvd
import tensorflow as tf

if os.environ.get("FP16") == "1":
    if LooseVersion(tf.__version__) >= LooseVersion("2.4.0"):
        from tensorflow.keras import mixed_precision
        mixed_precision.set_global_policy("mixed_float16")
    else:
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16")
        tf.keras.mixed_precision.experimental.set_policy(policy)

model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
opt = hvd.DistributedOptimizer(tf.optimizers.Adam(0.001 * hvd.size()))
model.compile(loss="sparse_categorical_crossentropy", optimizer=opt)
state = hvd.elastic.KerasState(model, batch=0, epoch=0)


def on_reset():
    tf.keras.backend.set_value(state.model.optimizer.lr, 0.001 * hvd.size())


state.register_reset_callbacks([on_reset])
