"""Plot the shim's dynamic loss scale over a real mixed-precision training run, beside Keras 3's.

Trains a small regression model under the `mixed_float16` policy with a custom loop written for
the TF 2.4 API (`get_scaled_loss`, `get_unscaled_gradients`, `apply_gradients`) on
`compat_lso.LossScaleOptimizer`, records the loss scale after every step, and writes
docs/img/loss_scale.png. At a few steps the batch is multiplied by 1e5, so the float16
activations overflow to inf: a real float16 overflow, not a doctored gradient. A burst of
consecutive overflows drives the scale down to Keras 2's floor of 1.

On Keras 3 the same model, from the same initial weights, on the same batches and overflows, is
also trained with Keras 3's own `LossScaleOptimizer` (its own loop form: `scale_loss`, then
`apply_gradients` of the scaled gradients), and its scale is drawn over the shim's: it has no
floor (the burst takes it below 1) and doubles without checking that the result is finite.

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
# Steps (1-based) whose batch is blown up to overflow float16; 121-123 overflow three in a row,
# and 200-215 sixteen in a row, which takes any scale below 2**16 down to the floor.
OVERFLOW_STEPS = (60, 121, 122, 123, *range(200, 216))
OUTPUT = Path(__file__).resolve().parents[1] / "img" / "loss_scale.png"


def train(native: bool = False) -> tuple[list[float], list[float], list[bool], str]:
    """Loss scale and loss after each step, whether the step was skipped, and the versions.

    `native`: Keras 3's own LossScaleOptimizer in its own loop form, instead of the shim's.
    """
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
    inner = tf.keras.optimizers.SGD(learning_rate=0.05)
    if native:
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
            inner, initial_scale=INITIAL_SCALE, dynamic_growth_steps=GROWTH_STEPS
        )
    else:
        optimizer = compat_lso.LossScaleOptimizer(
            inner, initial_scale=INITIAL_SCALE, dynamic_growth_steps=GROWTH_STEPS
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
            scaled_loss = optimizer.scale_loss(loss) if native else optimizer.get_scaled_loss(loss)
        gradients = tape.gradient(scaled_loss, model.trainable_variables)
        if not native:  # Keras 3's own class unscales inside apply_gradients
            gradients = optimizer.get_unscaled_gradients(gradients)
        finite = all(bool(tf.reduce_all(tf.math.is_finite(g))) for g in gradients)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))
        scales.append(float(optimizer.dynamic_scale if native else optimizer.loss_scale))
        losses.append(float(loss))
        skipped.append(not finite)
    versions = f"TensorFlow {tf.__version__}, Keras {_backend.keras_version()}"
    return scales, losses, skipped, versions


def keras_3() -> bool:
    import tensorflow as tf

    return not hasattr(tf.keras.mixed_precision.LossScaleOptimizer, "get_scaled_loss")


def plot(
    scales: list[float],
    losses: list[float],
    skipped: list[bool],
    versions: str,
    output: Path,
    *,
    native: tuple[list[float], list[float]] | None = None,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = list(range(1, len(scales) + 1))
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(9, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    top.step(
        steps,
        scales,
        where="post",
        color="tab:blue",
        label="compat_lso.LossScaleOptimizer (Keras 2's rule): scale after the step",
    )
    if native is not None:
        top.step(
            steps,
            native[0],
            where="post",
            color="tab:orange",
            linestyle="--",
            label="Keras 3's own LossScaleOptimizer, same run: no floor at 1",
        )
        top.axhline(1.0, color="black", linewidth=0.8, alpha=0.5)
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
        "Dynamic loss scale over a mixed_float16 training run\n"
        f"initial_scale={INITIAL_SCALE:g}, dynamic_growth_steps={GROWTH_STEPS}, {versions}\n"
        "float16 overflow injected at steps 60, 121-123 and 200-215 (shaded)",
        fontsize=10,
    )
    top.legend(loc="lower left", fontsize=9)
    top.grid(True, which="major", alpha=0.3)

    finite_losses = [loss if math.isfinite(loss) else math.nan for loss in losses]
    bottom.plot(steps, finite_losses, color="tab:blue", linewidth=1, label="compat_lso")
    if native is not None:
        native_losses = [loss if math.isfinite(loss) else math.nan for loss in native[1]]
        bottom.plot(
            steps, native_losses, color="tab:orange", linewidth=1, linestyle="--", label="Keras 3"
        )
        bottom.legend(loc="upper right", fontsize=9)
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
    native = None
    if keras_3():
        native_scales, native_losses, _, _ = train(native=True)
        native = (native_scales, native_losses)
        print(
            f"Keras 3's own class: lowest scale {min(native_scales):g}, final {native_scales[-1]:g}"
        )
    plot(scales, losses, skipped, versions, args.output, native=native)
    skipped_steps = [i + 1 for i, skip in enumerate(skipped) if skip]
    print(
        f"{versions}: skipped steps {skipped_steps}; lowest loss scale {min(scales):g}, "
        f"final {scales[-1]:g}"
    )
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
