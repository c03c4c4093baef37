"""Plot the shim's dynamic loss scale over a real mixed-precision training run.

Trains a small regression model under the `mixed_float16` policy with a custom loop written for
the TF 2.4 API (`get_scaled_loss`, `get_unscaled_gradients`, `apply_gradients`) on
`compat_lso.LossScaleOptimizer`, records the loss scale after every step, and writes
docs/img/loss_scale.png. At a few steps the batch is multiplied by 1e5, so the float16
activations overflow to inf: a real float16 overflow, not a doctored gradient.

    nox -s plot                                    # TF 2.21 (Keras 3)
    python docs/scripts/plot_loss_scale.py --output /tmp/loss_scale.png

Runs on every supported backend; TensorFlow and matplotlib must be installed.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

STEPS = 300
INITIAL_SCALE = 2.0**10
GROWTH_STEPS = 25
# Steps (1-based) whose batch is blown up to overflow float16; 121-123 overflow three in a row.
OVERFLOW_STEPS = (60, 121, 122, 123, 230)
OUTPUT = Path(__file__).resolve().parents[1] / "img" / "loss_scale.png"


def train() -> tuple[list[float], list[float], list[bool], str]:
    """Loss scale and loss after each step, whether the step was skipped, and the versions."""
    import numpy as np
    import tensorflow as tf

    import compat_lso
    from compat_lso import _backend

    tf.keras.utils.set_random_seed(0)
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(8,)),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(1, dtype="float32"),
        ]
    )
    optimizer = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.SGD(learning_rate=0.05),
        initial_scale=INITIAL_SCALE,
        dynamic_growth_steps=GROWTH_STEPS,
    )
    rng = np.random.default_rng(0)
    true_weights = rng.normal(size=(8, 1)).astype("float32")

    scales, losses, skipped = [], [], []
    for step in range(1, STEPS + 1):
        x = rng.normal(size=(64, 8)).astype("float32")
        y = np.sin(x @ true_weights)
        if step in OVERFLOW_STEPS:
            x = x * 1e5  # float16's largest finite value is 65504
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
        gradients = optimizer.get_unscaled_gradients(scaled_gradients)
        finite = all(bool(tf.reduce_all(tf.math.is_finite(g))) for g in gradients)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))
        scales.append(float(optimizer.loss_scale))
        losses.append(float(loss))
        skipped.append(not finite)
    versions = f"TensorFlow {tf.__version__}, Keras {_backend.keras_version()}"
    return scales, losses, skipped, versions


def plot(
    scales: list[float], losses: list[float], skipped: list[bool], versions: str, output: Path
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = list(range(1, len(scales) + 1))
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(9, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    top.step(steps, scales, where="post", color="tab:blue", label="loss scale after the step")
    overflow = [s for s, skip in zip(steps, skipped, strict=True) if skip]
    top.scatter(
        overflow,
        [scales[s - 1] for s in overflow],
        marker="v",
        color="tab:red",
        zorder=3,
        label="non-finite gradients: step skipped, scale halved",
    )
    for s in OVERFLOW_STEPS:
        top.axvline(s, color="tab:red", alpha=0.15, linewidth=3)
    top.set_yscale("log", base=2)
    top.set_ylabel("loss scale (log2)")
    top.set_title(
        "compat_lso.LossScaleOptimizer: dynamic loss scale over a mixed_float16 training run\n"
        f"initial_scale={INITIAL_SCALE:g}, dynamic_growth_steps={GROWTH_STEPS}, {versions}\n"
        f"float16 overflow injected at steps {', '.join(map(str, OVERFLOW_STEPS))} (shaded)",
        fontsize=10,
    )
    top.legend(loc="upper left", fontsize=9)
    top.grid(True, which="major", alpha=0.3)

    finite_losses = [loss if math.isfinite(loss) else math.nan for loss in losses]
    bottom.plot(steps, finite_losses, color="tab:gray", linewidth=1)
    bottom.set_yscale("log")
    bottom.set_ylabel("training loss (MSE)")
    bottom.set_xlabel("training step")
    bottom.grid(True, alpha=0.3)
    fig.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"default: {OUTPUT}")
    args = parser.parse_args()
    scales, losses, skipped, versions = train()
    plot(scales, losses, skipped, versions, args.output)
    skipped_steps = [i + 1 for i, skip in enumerate(skipped) if skip]
    print(f"{versions}: skipped steps {skipped_steps}; final loss scale {scales[-1]:g}")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
