"""Data and reporting shared by the old-style scripts and their migrated twins.

Not part of what is being compared: both versions of a script import this unchanged.
"""

from __future__ import annotations

import json

import numpy as np


def regression_data(seed: int = 0, samples: int = 64, overflow_at: int | None = None):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(samples, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")
    if overflow_at is not None:
        x[overflow_at, 0] = 1e30  # inf in float16: that batch's step must be skipped
    return x, y


def report(**values) -> None:
    """The last line a script prints: what the comparison test reads."""
    print("RESULT " + json.dumps(values, sort_keys=True))


def weights_digest(model) -> list[float]:
    return [float(np.asarray(w, dtype="float64").sum()) for w in model.get_weights()]
