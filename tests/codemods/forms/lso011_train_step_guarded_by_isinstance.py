# LSO011 on keras3: Model.train_step that scales only when its optimizer is a loss scale one
# (isinstance guards), reads the inner optimizer's rate, and clips each gradient by norm; the
# scale is a config value, not known to be a power of two.
import tensorflow as tf


def build_optimizer(params, base):
    if params["precision"] == "mixed_float16" and params["loss_scale"]:
        return tf.keras.mixed_precision.LossScaleOptimizer(base, initial_scale=params["loss_scale"])
    return base


class Detector(tf.keras.Model):
    def train_step(self, data):
        images, labels = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(labels, self(images, training=True))
            if isinstance(self.optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
                scaled = self.optimizer.get_scaled_loss(loss)
                inner = self.optimizer.inner_optimizer
            else:
                scaled, inner = loss, self.optimizer
        logs = {"loss": loss, "lr": inner.learning_rate(inner.iterations)}
        grads = tape.gradient(scaled, self.trainable_variables)
        if isinstance(self.optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
            grads = self.optimizer.get_unscaled_gradients(grads)
        if self.clip > 0:
            grads = [None if g is None else tf.clip_by_norm(g, self.clip) for g in grads]
            logs["grad_norm"] = tf.linalg.global_norm(grads)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return logs
