"""The model module of a small GAN project, written as TF 2.3-2.8 code was (a test project).

The shape of a public GAN training repository: a class whose `__init__` sets a `mixed_float16`
Policy with a loss scale, wraps one Adam (given `lr=`) in the experimental LossScaleOptimizer
with `loss_scale="dynamic"`, builds a generator and a discriminator and compiles both with that
one optimizer; train.py drives them. In TF 2.3-2.8 `compile()` left the loss scale optimizer as
it was (the Policy's loss scale never reached it), and both models shared its slots' owner, its
step counter and its loss scale. Written here; no repository's code.
"""

import tensorflow as tf
from tensorflow.keras import layers
from tensorflow.keras.mixed_precision import experimental as mixed_precision


class GAN:
    def __init__(self, learning_rate=2**-6):
        policy = mixed_precision.Policy("mixed_float16", loss_scale=1024)
        mixed_precision.set_policy(policy)
        optimizer = tf.keras.optimizers.Adam(lr=learning_rate, beta_1=0.5)
        self.optimizer = mixed_precision.LossScaleOptimizer(optimizer, loss_scale="dynamic")

        self.generator = self.build_model("generator")
        self.generator.compile(optimizer=self.optimizer, loss="mse")
        self.discriminator = self.build_model("discriminator")
        self.discriminator.compile(
            optimizer=self.optimizer,
            loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
        )

    @staticmethod
    def build_model(name):
        # One input feature: every float16 product has one term (train.py says why).
        return tf.keras.Sequential(
            [
                layers.Dense(4, activation="relu", input_shape=(1,)),
                layers.Dense(1, dtype="float32"),
            ],
            name=name,
        )
