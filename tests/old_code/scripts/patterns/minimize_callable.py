"""`minimize` on the loss scale optimizer: Keras 2 scales the loss and unscales the gradients itself.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow/Segmentation/VNet/utils/model_fn.py (`train_op = optimizer.minimize(total_loss,
global_step=global_step)` on a loss-scaled optimizer), in Keras 2's spelling: `minimize(loss,
var_list)` with the loss as a callable. Dynamic scale, an inf step at step 2.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate=2**-4))
x, y = data(steps=4, inf_at=1)
losses, scales, iterations = [], [], []
for i in range(4):
    features, labels = x[i : i + 1], y[i : i + 1]

    def total_loss():
        return tf.reduce_mean(tf.square(model(features) - labels))

    losses.append(number(total_loss()))
    optimizer.minimize(total_loss, var_list=model.trainable_variables)
    scales.append(float(optimizer.loss_scale))
    iterations.append(int(optimizer.iterations.numpy()))

report(losses=losses, scales=scales, iterations=iterations, weights=weights(model))
