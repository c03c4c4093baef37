"""Seeding a run the same way on both sides of `verify`, right after TensorFlow's import.

`verify` sets COMPAT_LSO_SEED=S for both runs; `python -m compat_lso` (run, trace) honours it:
as soon as the program has imported TensorFlow, before its first random operation and before it
configures devices, this seeds Python's `random`, NumPy and TensorFlow with S (what
`keras.utils.set_random_seed(S)` does at start-up, without importing Keras, which may be half
imported then) and turns on `tf.config.experimental.enable_op_determinism()`. A program that
seeds itself later still does so; both runs do the same. Importing this module imports nothing
heavy.
"""

from __future__ import annotations

import functools
import os

SEED_VARIABLE = "COMPAT_LSO_SEED"


def from_environment() -> None:
    """Seed after TensorFlow's import if COMPAT_LSO_SEED is set (an integer)."""
    value = os.environ.get(SEED_VARIABLE, "").strip()
    if not value:
        return
    try:
        seed = int(value)
    except ValueError:
        raise SystemExit(
            f"{SEED_VARIABLE} must be an integer, but got: {value!r}; set it to an integer "
            "(verify sets it from --seed) or unset it"
        ) from None
    from compat_lso.installer import startup

    startup.when_tensorflow_is_imported(functools.partial(seed_now, seed))


def seed_now(seed: int) -> None:
    import random

    import numpy as np
    import tensorflow as tf

    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    tf.config.experimental.enable_op_determinism()
