# LSO011/LSO021 on keras3: a trainer whose private method returns the unscaled gradients or
# accumulates them, and whose apply_gradients passes a second positional argument.
import tensorflow as tf

from .accumulate import GradientAccumulator


class Trainer:
    def __init__(self, strategy):
        self._strategy = strategy
        self._acc = GradientAccumulator()

    def set_optimizer(self, optimizer, fp16):
        self._fp16 = fp16
        self._opt = optimizer
        if fp16:
            self._opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(self._opt, "dynamic")

    def _gradients(self, batch):
        loss = tf.nn.compute_average_loss(self.losses(batch), global_batch_size=self.batch)
        if self._fp16:
            scaled = self._opt.get_scaled_loss(loss)
            grads = self._opt.get_unscaled_gradients(tf.gradients(scaled, self._vars))
        else:
            grads = tf.gradients(loss, self._vars)
        if self.accumulate > 1:
            self._acc(grads)
            return loss
        return grads, loss

    def _step_per_replica(self, batch):
        if self.accumulate == 1:
            grads, loss = self._gradients(batch)
            self._opt.apply_gradients(zip(grads, self._vars), 1.0)
            return loss
        loss = 0.0
        for part in self.split(batch):
            loss += self._gradients(part)
        self._opt.apply_gradients(zip(self._acc.gradients, self._vars), 1.0)
        self._acc.reset()
        return loss

    def _step(self, batch):
        losses = self._strategy.run(self._step_per_replica, args=(batch,))
        return self._strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    def fit(self, batches):
        for batch in batches:
            self._step(batch)
