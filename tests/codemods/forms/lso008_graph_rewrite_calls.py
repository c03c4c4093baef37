# LSO008: the graph rewrite on a TF1 optimizer built here, and on optimizers whose kind is only
# known at run time (a parameter, another module's class), with and without a loss scale object.
import horovod.tensorflow as hvd
import tensorflow as tf

import solvers


class ClippedMomentum(tf.compat.v1.train.Optimizer):
    """A TF1 optimizer of this module."""


def tf1_estimator(lr, amp):
    opt = tf.compat.v1.train.MomentumOptimizer(lr, 0.9)
    opt = hvd.DistributedOptimizer(opt)
    if amp:
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic")
    return opt


def with_scale_object(opt, start, period):
    if opt is None:
        opt = ClippedMomentum(False, "clipped")
    scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=start, increment_period=period)
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, scale)
    return opt, tf.identity(scale(), name="scale")


def eval_ops(amp):
    if amp == "fixed":
        one = tf.train.experimental.FixedLossScale(1)
        return tf.train.experimental.enable_mixed_precision_graph_rewrite(
            solvers.Lamb(learning_rate=0.0), one)
    return tf.train.experimental.enable_mixed_precision_graph_rewrite(
        solvers.Lamb(learning_rate=0.0))


def configure(opt, graph_rewrite):
    if graph_rewrite:
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
    return opt
