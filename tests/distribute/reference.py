"""The single-device scenario worked out in NumPy (float64), as an independent reference.

scripts/scenario.py trains Dense(3, tanh) -> Dense(1) on 6 global batches of 8 with
SGD(1/16, momentum 1/2) under a dynamic loss scale (initial 1024, doubled after 2 finite steps,
halved on a non-finite gradient, which skips the step). Here the same model, loss and update rules
are written out by hand, so that the runs are checked against something other than each other:
Keras's SGD with momentum is `v = momentum * v - lr * g; w = w + v`, and the loss is the mean of
the squared errors over the global batch (`fit` logs the running mean of the steps so far).

The data and initial weights are generated exactly as scenario.py generates them (same seeds);
if the two ever diverged, every comparison with this reference would fail.
"""

from __future__ import annotations

import numpy as np

STEPS, GLOBAL_BATCH, LOCAL_BATCH, FEATURES = 6, 8, 4, 4
INITIAL_SCALE, GROWTH_STEPS, LEARNING_RATE, MOMENTUM = 1024.0, 2, 0.0625, 0.5


def make_data(poison: str) -> tuple[np.ndarray, np.ndarray]:
    """As scenario.make_data."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(STEPS * GLOBAL_BATCH, FEATURES)).astype("float32")
    y = (x @ rng.normal(size=(FEATURES,))).astype("float32")
    for spot in poison.split("+") if poison != "none" else []:
        step, replica = (int(part) for part in spot.split(":"))
        x[step * GLOBAL_BATCH + replica * LOCAL_BATCH + 1, 0] = np.inf
    return x, y


def initial_weights() -> list[np.ndarray]:
    """As scenario.initial_weights."""
    rng = np.random.default_rng(1)
    return [
        rng.normal(size=(FEATURES, 3)).astype("float32") / 2,
        rng.normal(size=(3,)).astype("float32") / 4,
        rng.normal(size=(3, 1)).astype("float32") / 2,
        rng.normal(size=(1,)).astype("float32") / 4,
    ]


def train(poison: str) -> list[dict]:
    """Per step: the loss, the loss scale and counter after it, and weights + momentum slots."""
    x, y = make_data(poison)
    weights = [w.astype(np.float64) for w in initial_weights()]
    velocities = [np.zeros_like(w) for w in weights]
    scale, counter = INITIAL_SCALE, 0
    steps = []
    for step in range(STEPS):
        rows = slice(step * GLOBAL_BATCH, (step + 1) * GLOBAL_BATCH)
        inputs, targets = x[rows].astype(np.float64), y[rows].astype(np.float64)
        kernel1, bias1, kernel2, bias2 = weights
        with np.errstate(invalid="ignore"):
            hidden = np.tanh(inputs @ kernel1 + bias1)
            error = (hidden @ kernel2 + bias2)[:, 0] - targets
            loss = float(np.mean(error**2))
            d_output = (2.0 * error / GLOBAL_BATCH)[:, None]
            d_hidden_in = (d_output @ kernel2.T) * (1.0 - hidden**2)
            gradients = [
                inputs.T @ d_hidden_in,
                d_hidden_in.sum(axis=0),
                hidden.T @ d_output,
                d_output.sum(axis=0),
            ]
        if all(np.isfinite(g).all() for g in gradients):
            velocities = [
                MOMENTUM * v - LEARNING_RATE * g for v, g in zip(velocities, gradients, strict=True)
            ]
            weights = [w + v for w, v in zip(weights, velocities, strict=True)]
            counter += 1
            if counter == GROWTH_STEPS:
                scale, counter = scale * 2, 0
        else:
            scale, counter = max(scale / 2, 1.0), 0
        state = [float(v) for array in weights + velocities for v in np.ravel(array)]
        steps.append({"loss": loss, "scale": scale, "counter": counter, "state": state})
    return steps
