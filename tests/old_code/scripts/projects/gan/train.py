"""Train the GAN of models.py on synthetic data: generator and discriminator in turns, with fit.

Seeded NumPy data, multiples of 1/8, and starting weights that are multiples of 1/16, so that
TF 2.15 and TF 2.21 start from the same bits; batches of one sample of one feature, so that every
float16 product has one term (TF 2.15 sums float16 products in float16, TF 2.16+ in float32:
docs/old-code.md). In the second round one discriminator input is 1e30, inf in float16: that
step's gradients overflow, the step is skipped and the loss scale halves.

Prints one line `RESULT {json}`: each fit's losses, the shared optimizer's `iterations` after
each fit, and every trained weight.
"""

import json
import math

import numpy as np

from models import GAN


def starting_weights(model, seed):
    rng = np.random.default_rng(seed)
    model.set_weights(
        [(rng.integers(-8, 9, size=w.shape) / 16).astype("float32") for w in model.get_weights()]
    )


def number(value):
    value = float(value)
    return value if math.isfinite(value) else repr(value)


rng = np.random.default_rng(3)
noise = (rng.integers(-8, 9, size=(4, 1)) / 8).astype("float32")
real = (rng.integers(-8, 9, size=(4, 1)) / 8).astype("float32")
labels = np.concatenate([np.ones((4, 1)), np.zeros((4, 1))]).astype("float32")

gan = GAN()
starting_weights(gan.generator, seed=1)
starting_weights(gan.discriminator, seed=2)

losses, iterations = [], []
for round_ in range(3):
    history = gan.generator.fit(noise, real, batch_size=1, shuffle=False, verbose=0)
    losses.append([number(x) for x in history.history["loss"]])
    iterations.append(int(gan.optimizer.iterations.numpy()))
    fake = gan.generator.predict(noise, batch_size=1, verbose=0).astype("float32")
    samples = np.concatenate([real, fake])
    if round_ == 1:
        samples[2, 0] = 1e30  # inf in float16: this step overflows and is skipped
    history = gan.discriminator.fit(samples, labels, batch_size=1, shuffle=False, verbose=0)
    losses.append([number(x) for x in history.history["loss"]])
    iterations.append(int(gan.optimizer.iterations.numpy()))

trained = [np.asarray(w, "float32").ravel().tolist() for w in gan.generator.get_weights()]
trained += [np.asarray(w, "float32").ravel().tolist() for w in gan.discriminator.get_weights()]
print("RESULT " + json.dumps({"losses": losses, "iterations": iterations, "weights": trained}))
