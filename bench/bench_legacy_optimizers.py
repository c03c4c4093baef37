"""TF 2.15's legacy optimizers against what `compat_lso.install()` builds for them on Keras 3.

    .nox/tests-tf215/bin/python bench/bench_legacy_optimizers.py --output tf215.json
    .nox/tests-tf221/bin/python bench/bench_legacy_optimizers.py --output tf221.json
    python bench/bench_legacy_optimizers.py --compare tf215.json tf221.json

Each case builds `tf.keras.optimizers.legacy.<class>(...)` (TF 2.15: Keras 2's own legacy class;
Keras 3: after `compat_lso.install()`, Keras 3's class of the same rule, or the error that says
there is none), wraps it in `tf.keras.mixed_precision.LossScaleOptimizer` (Keras 2's meaning on
both) and trains the pattern corpus's model (tests/old_code/scripts/patterns/common.py) for 12
steps of a custom loop whose first six overflow float16 under the dynamic scale. `--compare`
prints, per case, whether losses, scales, iterations and weights are bit for bit equal, and the
largest relative difference of the weights. compat_lso/core/legacy_optimizers.py records the
result.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import warnings
from typing import Any

PATTERNS = (
    pathlib.Path(__file__).resolve().parents[1] / "tests" / "old_code" / "scripts" / "patterns"
)

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "sgd": ("SGD", {"learning_rate": 2**-4}),
    "sgd_momentum": ("SGD", {"learning_rate": 2**-4, "momentum": 0.5}),
    "sgd_nesterov": ("SGD", {"learning_rate": 2**-4, "momentum": 0.5, "nesterov": True}),
    "sgd_decay": ("SGD", {"learning_rate": 2**-4, "momentum": 0.5, "decay": 0.01}),
    "sgd_global_clipnorm": ("SGD", {"learning_rate": 2**-4, "global_clipnorm": 0.5}),
    "adam": ("Adam", {"learning_rate": 1e-2}),
    "adam_amsgrad": ("Adam", {"learning_rate": 1e-2, "amsgrad": True}),
    "adam_decay": ("Adam", {"learning_rate": 1e-2, "decay": 0.05}),
    "adam_lr_clipnorm": ("Adam", {"lr": 1e-2, "clipnorm": 1.0}),
    "rmsprop": ("RMSprop", {"learning_rate": 1e-2}),
    "rmsprop_momentum": ("RMSprop", {"learning_rate": 1e-2, "momentum": 0.5}),
    "rmsprop_centered": ("RMSprop", {"learning_rate": 1e-2, "centered": True}),
    "rmsprop_centered_momentum": (
        "RMSprop",
        {"learning_rate": 1e-2, "centered": True, "momentum": 0.5},
    ),
    "adagrad": ("Adagrad", {"learning_rate": 0.1}),
    "adagrad_no_initial": ("Adagrad", {"learning_rate": 0.1, "initial_accumulator_value": 0.0}),
    "adadelta": ("Adadelta", {"learning_rate": 1.0}),
    "adamax": ("Adamax", {"learning_rate": 1e-2}),
    "nadam": ("Nadam", {"learning_rate": 1e-2}),
    "ftrl": ("Ftrl", {"learning_rate": 0.1}),
    "ftrl_regularized": (
        "Ftrl",
        {
            "learning_rate": 0.1,
            "l1_regularization_strength": 0.01,
            "l2_regularization_strength": 0.01,
            "l2_shrinkage_regularization_strength": 0.01,
            "beta": 0.1,
        },
    ),
}
STEPS = 12


def measure() -> dict[str, Any]:
    sys.path.insert(0, str(PATTERNS))
    import tensorflow as tf
    from common import overflowing_data, small_model  # type: ignore[import-not-found]

    import compat_lso

    compat_lso.install()  # Keras 2: nothing changes for the legacy classes
    warnings.simplefilter("ignore")
    x, y = overflowing_data(steps=STEPS)
    results: dict[str, Any] = {"tensorflow": tf.__version__}
    for case, (name, arguments) in CASES.items():
        model = small_model()
        try:
            inner = getattr(tf.keras.optimizers.legacy, name)(**arguments)
        except ImportError as error:
            results[case] = {"error": str(error)}
            continue
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(inner)
        results[case] = _train(model, optimizer, (x, y))
    return results


def _train(model: Any, optimizer: Any, data: tuple[Any, Any]) -> dict[str, Any]:
    import numpy as np
    import tensorflow as tf

    x, y = data

    @tf.function  # type: ignore[untyped-decorator]
    def step(features: Any, targets: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(features) - targets))
            scaled = optimizer.get_scaled_loss(loss)
        gradients = optimizer.get_unscaled_gradients(
            tape.gradient(scaled, model.trainable_variables)
        )
        optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))
        return loss

    losses, scales, iterations = [], [], []
    for i in range(STEPS):
        losses.append(float(step(x[i : i + 1], y[i : i + 1])).hex())
        scales.append(float(optimizer.loss_scale))
        iterations.append(int(optimizer.iterations.numpy()))
    weights = [float(v).hex() for w in model.get_weights() for v in np.ravel(w)]
    return {"losses": losses, "scales": scales, "iterations": iterations, "weights": weights}


def compare(reference: dict[str, Any], other: dict[str, Any]) -> None:
    print(f"{reference['tensorflow']} (legacy classes) against {other['tensorflow']}")
    for case in CASES:
        old, new = reference[case], other[case]
        if "error" in new:
            print(f"{case:26} refused: {new['error'][:110]}...")
            continue
        equal = " ".join(f"{key}={'=' if old[key] == new[key] else 'X'}" for key in old)
        pairs = zip(old["weights"], new["weights"], strict=True)
        worst = max(
            abs(float.fromhex(a) - float.fromhex(b)) / max(abs(float.fromhex(a)), 1e-30)
            for a, b in pairs
        )
        print(f"{case:26} {equal}  weights max relative difference {worst:.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=pathlib.Path)
    parser.add_argument("--compare", nargs=2, type=pathlib.Path, metavar=("TF215", "OTHER"))
    options = parser.parse_args()
    if options.compare:
        reference, other = (json.loads(p.read_text()) for p in options.compare)
        compare(reference, other)
        return
    results = measure()
    text = json.dumps(results, indent=1)
    if options.output:
        options.output.write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
