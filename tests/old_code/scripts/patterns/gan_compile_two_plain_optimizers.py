"""A GAN's train_step override under the mixed_float16 global policy, two plain optimizers.

Pattern: keras-team/keras-io@cca4efba8e0b8514ae3817931696294039b3bfc9,
examples/generative/dcgan_overriding_train_step.py (`GAN.compile(d_optimizer, g_optimizer,
loss_fn)` stores the two optimizers after `super().compile()`, `train_step` applies the
gradients of each loss through them), trained under `set_global_policy("mixed_float16")`.
Keras wraps only the optimizer its own compile() gets (here the default, unused): the two
optimizers stay plain, without loss scaling, on TF 2.15; no migration may wrap them either.
Trained with `fit`. The policy is set back to float32 at the end.
"""

import tensorflow as tf

from common import data, number, report, set_starting_weights, weights


class GAN(tf.keras.Model):
    def __init__(self, discriminator, generator):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    def train_step(self, data):
        real_images, noise = data
        generated_images = self.generator(noise)
        # keras-io concatenates both batches; two calls keep each float16 product one term
        # long (common.py), which TF 2.15 and TF 2.21 round alike.
        with tf.GradientTape() as tape:
            d_loss = self.loss_fn(tf.ones((1, 1)), self.discriminator(generated_images))
            d_loss += self.loss_fn(tf.zeros((1, 1)), self.discriminator(real_images))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        misleading_labels = tf.zeros((1, 1))
        with tf.GradientTape() as tape:
            predictions = self.discriminator(self.generator(noise))
            g_loss = self.loss_fn(misleading_labels, predictions)
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        return {"d_loss": d_loss, "g_loss": g_loss}


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.iterations = [], []

    def on_train_batch_end(self, batch, logs=None):
        gan = self.model
        self.losses.append([number(logs["d_loss"]), number(logs["g_loss"])])
        self.iterations.append([int(gan.d_optimizer.iterations.numpy()), int(gan.g_optimizer.iterations.numpy())])


# The discriminator computes in float32: the generator's gradients pass back through its
# 2-unit layer, a float16 sum of two products that TF 2.15 and TF 2.21 round differently.
tf.keras.mixed_precision.set_global_policy("mixed_float16")
discriminator = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(2, activation="relu", input_shape=(1,), dtype="float32"),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
generator = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(4, activation="relu", input_shape=(1,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
set_starting_weights(discriminator, seed=7)
set_starting_weights(generator, seed=8)
gan = GAN(discriminator=discriminator, generator=generator)
gan.compile(
    d_optimizer=tf.keras.optimizers.SGD(learning_rate=2**-4),
    g_optimizer=tf.keras.optimizers.SGD(learning_rate=2**-4),
    loss_fn=tf.keras.losses.BinaryCrossentropy(from_logits=True),
)
real_images, noise = data(steps=4, seed=9)
record = Record()
gan.fit(real_images, noise, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.keras.mixed_precision.set_global_policy("float32")

report(
    losses=record.losses,
    iterations=record.iterations,
    weights=weights(discriminator) + weights(generator),
)
