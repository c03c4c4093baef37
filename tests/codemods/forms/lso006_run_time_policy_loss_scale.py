# LSO006/LSO015: a Policy whose loss_scale is a flag, chosen among dtypes; TF 2.4's class with a
# fixed scale from the same flag around optimizers built in another branch.
import tensorflow as tf
from absl import flags
from tensorflow.keras.mixed_precision import LossScaleOptimizer

FLAGS = flags.FLAGS


def set_precision():
    if FLAGS.dtype == "fp16":
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16", loss_scale=FLAGS.loss_scale)
        tf.keras.mixed_precision.experimental.set_policy(policy)
    elif FLAGS.dtype == "bf16":
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_bfloat16")
        tf.keras.mixed_precision.experimental.set_policy(policy)
    else:
        tf.keras.mixed_precision.experimental.set_policy("float32")


def optimizers(sparse_adam):
    if FLAGS.optimizer == "sgd":
        table_opt = dense_opt = tf.keras.optimizers.SGD(FLAGS.lr)
    else:
        table_opt, dense_opt = sparse_adam(FLAGS.lr), tf.keras.optimizers.Adam(FLAGS.lr)
    if FLAGS.dtype == "fp16":
        table_opt = LossScaleOptimizer(table_opt, initial_scale=FLAGS.loss_scale, dynamic=False)
        dense_opt = LossScaleOptimizer(dense_opt, initial_scale=FLAGS.loss_scale, dynamic=False)
    return table_opt, dense_opt
