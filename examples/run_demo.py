"""The README's main job: train the bundled legacy project, old API against migrated API.

Trains examples/legacy_project twice on the installed TensorFlow: once as written (the TF 2.3
experimental API through compat_lso), once with the constructor migrated to the non-experimental
class, and checks that configs, the loss-scale trajectory (with an injected float16 overflow)
and the trained weights are identical. Exits non-zero if anything differs.
"""

from __future__ import annotations

import os
import sys
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import compat_lso  # noqa: E402
from compat_lso import _backend  # noqa: E402
from legacy_project import train as legacy  # noqa: E402


def migrated_optimizer() -> tf.keras.optimizers.Optimizer:
    # What the deprecation warning (and the codemod) says to write instead.
    return compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.05), initial_scale=1024, dynamic_growth_steps=4
    )


def main() -> int:
    print(
        f"TensorFlow {tf.__version__}, tf.keras is {_backend.keras_package().__name__} "
        f"{_backend.keras_version()}"
    )
    batches = legacy.make_batches()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecationWarning)
        old_optimizer = legacy.make_optimizer()
    for warning in caught:
        print(f"warning: {warning.message}")
    new_optimizer = migrated_optimizer()

    old_model, new_model = legacy.build_model(), legacy.build_model()
    old_history = legacy.train(old_model, old_optimizer, batches)
    new_history = legacy.train(new_model, new_optimizer, batches)

    print(f"\n{'step':>4}  {'loss (old API)':>14}  {'scale':>6}  {'loss (new API)':>14}  {'scale':>6}")
    for step, ((old_loss, old_scale), (new_loss, new_scale)) in enumerate(zip(old_history, new_history)):
        note = "  <- overflow: step skipped, scale halved" if step == legacy.OVERFLOW_STEP else ""
        print(f"{step:>4}  {old_loss:>14.4f}  {old_scale:>6.0f}  {new_loss:>14.4f}  {new_scale:>6.0f}{note}")

    checks = {
        "configs equal": old_optimizer.get_config() == new_optimizer.get_config(),
        "loss and scale trajectories equal": np.array_equal(old_history, new_history, equal_nan=True),
        "trained weights equal": all(
            np.array_equal(a, b) for a, b in zip(old_model.get_weights(), new_model.get_weights())
        ),
        "overflow step skipped and scale halved": old_history[legacy.OVERFLOW_STEP][1]
        == old_history[legacy.OVERFLOW_STEP - 1][1] / 2,
        "iterations count the skipped step": int(old_optimizer.iterations) == legacy.STEPS,
    }
    print()
    for name, passed in checks.items():
        print(f"{'ok  ' if passed else 'FAIL'} {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
