"""The GAN project's model module (../gan/models.py) on TF 2.4-2.15's API: its TF 2.15 twin.

The same models, data and training; `set_global_policy("mixed_float16")` for the Policy, whose
loss scale never reached the optimizer (compile() leaves a loss scale optimizer as it is), and
`LossScaleOptimizer(Adam(learning_rate=...))` for the experimental class with
`loss_scale="dynamic"` (2**15, doubling after 2000 finite steps). TF 2.15's Adam, unlike TF 2.4-2.10's,
creates its slots only for the variables it is first built with and refuses the others
(KeyError at the discriminator's first step): built here for both models' variables, it holds
what TF 2.4-2.10's Adam held after both trained, one pair of slots per variable, one step counter
and one loss scale for both models. tests/old_code/references/projects.tf215.json holds what this
twin reported natively on TF 2.15.
"""

import tensorflow as tf
from tensorflow.keras import layers, mixed_precision


class GAN:
    def __init__(self, learning_rate=2**-6):
        mixed_precision.set_global_policy("mixed_float16")
        optimizer = tf.keras.optimizers.Adam(learning_rate=learning_rate, beta_1=0.5)
        self.optimizer = mixed_precision.LossScaleOptimizer(optimizer)

        self.generator = self.build_model("generator")
        self.generator.compile(optimizer=self.optimizer, loss="mse")
        self.discriminator = self.build_model("discriminator")
        self.discriminator.compile(
            optimizer=self.optimizer,
            loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
        )
        self.optimizer.build(
            self.generator.trainable_variables + self.discriminator.trainable_variables
        )

    @staticmethod
    def build_model(name):
        return tf.keras.Sequential(
            [
                layers.Dense(4, activation="relu", input_shape=(1,)),
                layers.Dense(1, dtype="float32"),
            ],
            name=name,
        )
