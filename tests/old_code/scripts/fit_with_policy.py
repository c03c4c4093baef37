"""TF 2.3 style: a mixed_float16 Policy and Model.fit; compile adds the loss scale."""

import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

from common import regression_data, report, weights_digest

policy = mixed_precision.Policy("mixed_float16", loss_scale=mixed_precision.global_policy().loss_scale or "dynamic")
mixed_precision.set_policy(policy)

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(16, activation="relu", input_shape=(8,)),
        tf.keras.layers.Dense(1, dtype="float32"),
    ]
)
model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
x, y = regression_data()
history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)

report(
    loss=history.history["loss"],
    loss_scale=float(model.optimizer.loss_scale()),
    iterations=int(model.optimizer.iterations.numpy()),
    weights=weights_digest(model),
)
