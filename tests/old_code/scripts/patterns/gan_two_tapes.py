"""A GAN with two loss scale optimizers: two tapes, each loss scaled, each gradient unscaled.

Pattern: tensorflow/docs@945a448704b25a0897ed24abd45ab4d0b0d6f3c2,
site/en/tutorials/generative/dcgan.ipynb, `train_step` (one `gen_tape` and one `disc_tape`,
`generator_optimizer.apply_gradients`, `discriminator_optimizer.apply_gradients`), with both
optimizers wrapped and the manual pattern of site/en/guide/mixed_precision.ipynb (same commit)
applied to each loss, as mixed-precision GAN trainers built on that tutorial do. Dynamic scales,
an inf noise sample at step 3.
"""

import numpy as np
import tensorflow as tf

from common import data, number, report, set_starting_weights, weights

generator = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(4, activation="relu", input_shape=(1,), dtype="mixed_float16"),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
discriminator = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(2, activation="relu", input_shape=(1,), dtype="mixed_float16"),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(generator, seed=4)
set_starting_weights(discriminator, seed=5)
generator_optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(2**-4))
discriminator_optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(2**-5))
cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)


@tf.function
def train_step(images, noise):
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        generated_images = generator(noise, training=True)
        real_output = discriminator(images, training=True)
        fake_output = discriminator(generated_images, training=True)
        gen_loss = cross_entropy(tf.ones_like(fake_output), fake_output)
        disc_loss = cross_entropy(tf.ones_like(real_output), real_output) + cross_entropy(
            tf.zeros_like(fake_output), fake_output
        )
        scaled_gen_loss = generator_optimizer.get_scaled_loss(gen_loss)
        scaled_disc_loss = discriminator_optimizer.get_scaled_loss(disc_loss)
    gradients_of_generator = gen_tape.gradient(scaled_gen_loss, generator.trainable_variables)
    gradients_of_discriminator = disc_tape.gradient(scaled_disc_loss, discriminator.trainable_variables)
    gradients_of_generator = generator_optimizer.get_unscaled_gradients(gradients_of_generator)
    gradients_of_discriminator = discriminator_optimizer.get_unscaled_gradients(gradients_of_discriminator)
    generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
    discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator, discriminator.trainable_variables))
    return gen_loss, disc_loss


images, noise = data(steps=4, seed=6)
noise = (noise + 0.5).astype(np.float32)
noise[2, 0] = 1e30
losses, scales, iterations = [], [], []
for i in range(4):
    gen_loss, disc_loss = train_step(images[i : i + 1], noise[i : i + 1])
    losses.append([number(gen_loss), number(disc_loss)])
    scales.append([float(generator_optimizer.loss_scale), float(discriminator_optimizer.loss_scale)])
    iterations.append([int(generator_optimizer.iterations.numpy()), int(discriminator_optimizer.iterations.numpy())])

report(
    losses=losses,
    scales=scales,
    iterations=iterations,
    weights=weights(generator) + weights(discriminator),
)
