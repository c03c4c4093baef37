"""TF 2.1-2.8 experimental API: a train_step override, manual pattern, clipping before apply.

Pattern: google/automl@0f22ed5570a532945ca0bd5f73814e8d89701685, efficientdet/keras/train_lib.py
(`tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale='dynamic')`;
`train_step` checks `isinstance(self.optimizer,
tf.keras.mixed_precision.experimental.LossScaleOptimizer)` before `get_scaled_loss` and
`get_unscaled_gradients`, clips by global norm, applies). The same program as
../train_step_override_clip.py (TF215_TWIN, the later version of that file), whose TF 2.15
numbers are this script's reference.
"""

import tensorflow as tf

from common import data, number, report, set_starting_weights, weights

TF215_TWIN = "train_step_override_clip.py"  # the TF 2.4-2.15 spelling of this program, one folder up


class EfficientDetNetTrain(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(4, activation="relu", dtype="mixed_float16")
        self.head = tf.keras.layers.Dense(1, dtype="float32")

    def call(self, inputs, training=False):
        return self.head(self.hidden(inputs))

    def train_step(self, data):
        images, labels = data
        with tf.GradientTape() as tape:
            total_loss = tf.reduce_mean(tf.square(self(images, training=True) - labels))
            if isinstance(self.optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
                scaled_loss = self.optimizer.get_scaled_loss(total_loss)
            else:
                scaled_loss = total_loss
        trainable_vars = self.trainable_variables
        scaled_gradients = tape.gradient(scaled_loss, trainable_vars)
        if isinstance(self.optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
            gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
        else:
            gradients = scaled_gradients
        clip_norm = 0.5
        gradients, _ = tf.clip_by_global_norm(gradients, clip_norm)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        return {"loss": total_loss}


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.scales, self.iterations = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.scales.append(float(self.model.optimizer.loss_scale()))
        self.iterations.append(int(self.model.optimizer.iterations.numpy()))


model = EfficientDetNetTrain()
model(tf.zeros((1, 1)))  # builds the layers (Keras 3's build() of a subclass does not)
set_starting_weights(model)
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=2**-4), loss_scale="dynamic"
)
model.compile(optimizer=optimizer)
x, y = data(steps=4, inf_at=1)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])

report(losses=record.losses, scales=record.scales, iterations=record.iterations, weights=weights(model))
