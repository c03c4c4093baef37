"""A train_step's loop over the unscaled gradients: clip each, clip all, log the norm; sparse too.

Pattern: google/automl@17c4cac0d7601de879d9f3d57f3590c11b7af240, efficientdet/keras/train_lib.py,
`EfficientDetNetTrain.train_step` (`scaled_loss = self.optimizer.get_scaled_loss(total_loss)`
under an isinstance check, `get_unscaled_gradients` under the same check, then
`[tf.clip_by_norm(g, clip_norm) if g is not None else None for g in gradients]`,
`tf.clip_by_global_norm(gradients, clip_norm)`, `loss_vals['gradient_norm'] =
tf.linalg.global_norm(gradients)`, `self.optimizer.apply_gradients(zip(gradients,
trainable_vars))`), as a custom loop in a tf.function. An Embedding beside the Dense layers gives
IndexedSlices gradients, which Keras 2 unscales as IndexedSlices. Dynamic scale, an inf sample
at step 2; the norms logged are reported with the weights.
"""

import numpy as np
import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
embedding = tf.keras.layers.Embedding(3, 1, dtype="mixed_float16")
embedding.build((None,))
embedding.set_weights([(np.arange(3).reshape(3, 1) / 16).astype("float32")])
trainable_vars = model.trainable_variables + embedding.trainable_variables
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))
clip_norm = 0.5


@tf.function
def train_step(images, ids, labels):
    with tf.GradientTape() as tape:
        outputs = model(images, training=True) + tf.cast(embedding(ids), tf.float32)
        total_loss = tf.reduce_mean(tf.square(outputs - labels))
        if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
            scaled_loss = optimizer.get_scaled_loss(total_loss)
        else:
            scaled_loss = total_loss
    scaled_gradients = tape.gradient(scaled_loss, trainable_vars)
    if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
        gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    else:
        gradients = scaled_gradients
    gradients = [tf.clip_by_norm(g, clip_norm) if g is not None else None for g in gradients]
    gradients, _ = tf.clip_by_global_norm(gradients, clip_norm)
    gradient_norm = tf.linalg.global_norm(gradients)
    optimizer.apply_gradients(zip(gradients, trainable_vars))
    return total_loss, gradient_norm


x, y = data(steps=4, inf_at=1)
losses, norms, scales, iterations = [], [], [], []
for step in range(4):
    loss, norm = train_step(x[step : step + 1], tf.constant([step % 3]), y[step : step + 1])
    losses.append(number(loss))
    norms.append(number(norm))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(
    losses=losses,
    norms=norms,
    scales=scales,
    iterations=iterations,
    weights=weights(model) + [np.asarray(embedding.get_weights()[0]).ravel().tolist()],
)
