# LSO002/LSO021: the optimizer wrapped in the experimental class when grappler's
# auto_mixed_precision option is on; in graph mode its get_gradients scales, and the applied
# gradients are divided by the replica count first.
import tensorflow as tf


class Trainer:
    def __init__(self, model, opt):
        options = tf.config.optimizer.get_experimental_options()
        if options.get("auto_mixed_precision") and not isinstance(
            opt, tf.keras.mixed_precision.experimental.LossScaleOptimizer
        ):
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")
        self._model = model
        self._opt = opt

    def _grads(self, batch):
        if tf.executing_eagerly():
            with tf.GradientTape() as tape:
                loss = self._model.loss(batch)
            return tape.gradient(loss, self._model.trainable_variables)
        loss = self._model.loss(batch)
        return self._opt.get_gradients(loss, self._model.trainable_variables)

    def _apply(self, grads, replicas):
        if replicas != 1:
            grads = [g / tf.cast(replicas, g.dtype) for g in grads]
        self._opt.apply_gradients(list(zip(grads, self._model.trainable_variables)))

    def step(self, batch, replicas=1):
        self._apply(self._grads(batch), replicas)
