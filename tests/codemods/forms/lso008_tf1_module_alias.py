# LSO008, nothing to do: TF1 code through `tensorflow.compat.v1 as tf`, where the graph rewrite
# under tf.train.experimental still exists; the same call beside TF1's own loss scale object.
import tensorflow.compat.v1 as tf


def train_op(loss, lr, params):
    opt = tf.train.MomentumOptimizer(lr, momentum=params["momentum"])
    if params["amp"]:
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
    elif params["fixed_scale"]:
        scale = tf.mixed_precision.FixedLossScale(params["fixed_scale"])
        opt = tf.mixed_precision.enable_mixed_precision_graph_rewrite(opt, scale)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        return opt.minimize(loss, tf.train.get_or_create_global_step())
