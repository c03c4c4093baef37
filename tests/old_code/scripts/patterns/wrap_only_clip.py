"""Wrap-only loop with clipping: gradients of the unscaled loss, clip_by_global_norm, apply.

Pattern: tensorflow/models@00c3ce73bfca5b752323ede355957ab2e8e83ca1,
research/object_detection/model_lib_v2.py, `eager_train_step` (`tape.gradient(total_loss, ...)`,
`tf.clip_by_global_norm(gradients, clip_gradients_value)`, `optimizer.apply_gradients`), with the
optimizer wrapped in a loss scale optimizer as the object-detection trainers of the TF 2.2-2.4
era did for mixed_float16. Dynamic scale, an inf step at step 3.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

detection_model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))
clip_gradients_value = 0.5


@tf.function
def eager_train_step(features, labels):
    with tf.GradientTape() as tape:
        total_loss = tf.reduce_mean(tf.square(detection_model(features) - labels))
    trainable_variables = detection_model.trainable_variables
    gradients = tape.gradient(total_loss, trainable_variables)
    if clip_gradients_value:
        gradients, _ = tf.clip_by_global_norm(gradients, clip_gradients_value)
    optimizer.apply_gradients(zip(gradients, trainable_variables))
    return total_loss


x, y = data(steps=4, inf_at=2)
losses, scales, iterations = [], [], []
for i in range(4):
    losses.append(number(eager_train_step(x[i : i + 1], y[i : i + 1])))
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(detection_model))
