# LSO008 beside LSO001: a loss scale only known at run time (a flag), for the Keras class in one
# branch and the graph rewrite in the other; and a helper that wraps the optimizer either way.
import tensorflow as tf

import solvers


class Runner:
    def __init__(self, flags):
        self.opt = solvers.build(flags)
        if flags.fp16:
            scale = solvers.loss_scale(flags, default=128)
            self.opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(self.opt, scale)
        elif flags.rewrite:
            scale = solvers.loss_scale(flags, default=128)
            self.opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(self.opt, scale)


def wrap(opt, fp16, rewrite, loss_scale="dynamic"):
    if fp16:
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale=loss_scale)
    if rewrite:
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
    return opt
