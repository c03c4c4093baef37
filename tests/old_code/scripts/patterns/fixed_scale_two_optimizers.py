"""Two fixed-scale loss scale optimizers (embedding and MLP), the manual pattern with each.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow2/Recommendation/DLRM/main.py (`embedding_optimizer = LossScaleOptimizer(
embedding_optimizer, initial_scale=FLAGS.loss_scale, dynamic=False)` and the same for
`mlp_optimizer`, imported as `from tensorflow.keras.mixed_precision import LossScaleOptimizer`),
each optimizer scaling the loss and unscaling its own gradients. Fixed scales 1024 and 256.
"""

import tensorflow as tf
from tensorflow.keras.mixed_precision import LossScaleOptimizer

from common import data, number, report, set_starting_weights, weights

embedding = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(1,), dtype="mixed_float16")])
mlp = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,), dtype="float32")])
set_starting_weights(embedding, seed=10)
set_starting_weights(mlp, seed=11)
embedding_optimizer = LossScaleOptimizer(tf.keras.optimizers.SGD(2**-5), initial_scale=1024, dynamic=False)
mlp_optimizer = LossScaleOptimizer(tf.keras.optimizers.SGD(2**-4), initial_scale=256, dynamic=False)


@tf.function
def train_step(x, y):
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_mean(tf.square(mlp(tf.cast(embedding(x), tf.float32)) - y))
        embedding_loss = embedding_optimizer.get_scaled_loss(loss)
        mlp_loss = mlp_optimizer.get_scaled_loss(loss)
    embedding_gradients = embedding_optimizer.get_unscaled_gradients(
        tape.gradient(embedding_loss, embedding.trainable_variables)
    )
    mlp_gradients = mlp_optimizer.get_unscaled_gradients(tape.gradient(mlp_loss, mlp.trainable_variables))
    embedding_optimizer.apply_gradients(zip(embedding_gradients, embedding.trainable_variables))
    mlp_optimizer.apply_gradients(zip(mlp_gradients, mlp.trainable_variables))
    return loss


x, y = data(steps=4)
losses, scales, iterations = [], [], []
for i in range(4):
    losses.append(number(train_step(x[i : i + 1], y[i : i + 1])))
    scales.append([float(embedding_optimizer.loss_scale), float(mlp_optimizer.loss_scale)])
    iterations.append([int(embedding_optimizer.iterations.numpy()), int(mlp_optimizer.iterations.numpy())])

report(losses=losses, scales=scales, iterations=iterations, weights=weights(embedding) + weights(mlp))
