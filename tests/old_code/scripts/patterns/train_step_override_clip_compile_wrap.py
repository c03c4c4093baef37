"""A Model.train_step override scaling through the optimizer compile() wrapped, then clipping.

Pattern: google/automl@17c4cac0d7601de879d9f3d57f3590c11b7af240, efficientdet/keras/train_lib.py,
`EfficientDetNetTrain.train_step` (`self.optimizer.get_scaled_loss(total_loss)` and
`get_unscaled_gradients` under an isinstance check, `self.optimizer.inner_optimizer` for the
learning rate, `tf.clip_by_norm` per gradient then `tf.clip_by_global_norm`), compiled as
efficientdet/keras/train.py does: `tf.keras.mixed_precision.set_global_policy(Policy(precision))`
and the plain optimizer of `get_optimizer` (its `loss_scale` defaults to None, so `compile`
wraps it). Trained with `fit`; a callback reads `self.model.optimizer.loss_scale`. Dynamic
scale, an inf sample at step 2. The policy is set back to float32 at the end.
"""

import tensorflow as tf

from common import data, number, report, set_starting_weights, weights


class EfficientDetNetTrain(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(4, activation="relu")
        self.head = tf.keras.layers.Dense(1, dtype="float32")

    def call(self, inputs, training=False):
        return self.head(self.hidden(inputs))

    def train_step(self, data):
        images, labels = data
        with tf.GradientTape() as tape:
            total_loss = tf.reduce_mean(tf.square(self(images, training=True) - labels))
            if isinstance(self.optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
                scaled_loss = self.optimizer.get_scaled_loss(total_loss)
                optimizer = self.optimizer.inner_optimizer
            else:
                scaled_loss = total_loss
                optimizer = self.optimizer
        trainable_vars = self.trainable_variables
        scaled_gradients = tape.gradient(scaled_loss, trainable_vars)
        if isinstance(self.optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
            gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
        else:
            gradients = scaled_gradients
        clip_norm = 0.5
        gradients = [tf.clip_by_norm(g, clip_norm) if g is not None else None for g in gradients]
        gradients, _ = tf.clip_by_global_norm(gradients, clip_norm)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        return {"loss": total_loss, "learning_rate": optimizer.learning_rate}


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.scales, self.iterations = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.scales.append(float(self.model.optimizer.loss_scale))
        self.iterations.append(int(self.model.optimizer.iterations.numpy()))


policy = tf.keras.mixed_precision.Policy("mixed_float16")
tf.keras.mixed_precision.set_global_policy(policy)
model = EfficientDetNetTrain()
model(tf.zeros((1, 1)))  # builds the layers (Keras 3's build() of a subclass does not)
set_starting_weights(model)
model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=2**-4))
x, y = data(steps=4, inf_at=1)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.keras.mixed_precision.set_global_policy("float32")

report(losses=record.losses, scales=record.scales, iterations=record.iterations, weights=weights(model))
