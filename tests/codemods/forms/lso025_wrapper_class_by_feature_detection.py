# LSO025/LSO019: the wrapper class picked by feature detection (TF 2.4's class, else the
# experimental one with its loss_scale); a trainer that unscales on a tape when eager, and asks
# the optimizer's get_gradients when not.
import tensorflow as tf

from .compat import has_api


def with_loss_scaling(opt):
    kwargs = {}
    if has_api("keras.mixed_precision.LossScaleOptimizer"):
        cls = tf.keras.mixed_precision.LossScaleOptimizer
    else:
        cls = tf.keras.mixed_precision.experimental.LossScaleOptimizer
        kwargs = dict(loss_scale="dynamic")
    return opt if isinstance(opt, cls) else cls(opt, **kwargs)


class Trainer:
    def __init__(self, model, opt, fp16):
        self._model = model
        self._fp16 = fp16
        self._opt = with_loss_scaling(opt) if fp16 else opt

    def _grads(self, batch):
        if tf.executing_eagerly():
            with tf.GradientTape() as tape:
                loss = self._model.loss(batch)
                if self._fp16:
                    loss = self._opt.get_scaled_loss(loss)
            grads = tape.gradient(loss, self._model.trainable_variables)
            if self._fp16:
                grads = self._opt.get_unscaled_gradients(grads)
        else:
            loss = self._model.loss(batch)
            grads = self._opt.get_gradients(loss, self._model.trainable_variables)
        return grads

    def _apply(self, grads):
        self._opt.apply_gradients(list(zip(grads, self._model.trainable_variables)))

    def step(self, batch, hvd):
        self._apply(self._grads(batch))
        hvd.broadcast_variables(self._opt.variables(), root_rank=0)
