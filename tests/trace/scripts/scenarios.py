"""Training scenarios for tests/trace, run under `python -m compat_lso trace` or `run`.

    python scenarios.py REFERENCES.json CLASSES SCENARIOS

CLASSES: comma-separated, each `native` (the backend's own class: Keras 3's
`keras.optimizers.LossScaleOptimizer`, Keras 2's / tf_keras's
`tf.keras.mixed_precision.LossScaleOptimizer`), `compat` (`compat_lso.LossScaleOptimizer`) or
`tf24` (the name `tf.keras.mixed_precision.LossScaleOptimizer`, whatever is behind it) or
`legacy` (Keras 2: that name around a `tf.keras.optimizers.legacy` optimizer).
SCENARIOS: comma-separated, run for each class in this order: `dropped` (an optimizer made and
dropped, no step), `eager`, `function` (custom
loops), `fixed` (dynamic=False; not with Keras 3's own class), `two` (two optimizers, the
second created stepping first; `two_function`: the same in a tf.function), `mirrored`
(MirroredStrategy, two logical CPUs), `factor` (Keras 3 only, once: a plain SGD with
`loss_scale_factor` wrapped by Keras 3's LossScaleOptimizer, one step; then a plain SGD with
`loss_scale_factor=8`, `fixed`'s three steps), `losses` (once, `native`: two losses scaled per
step and the constants `scale_loss(1.0)` that are no loss, eagerly and in a tf.function, two
steps each), `ulp` (two `native` optimizers, one step each
on weights one ulp apart; once), `fit` (Model.fit, compile()'s wrapping under mixed_float16;
once, not per class), `operations` (once, nothing run: the operations of a step's graph with the
optimizer traced and not, written as "operations").

After each step the script reads the trained variables directly and writes, per step in order,
what the trace must show: the scenario, the class, the variables' float64 sums of squares and
the fingerprints of their bytes, the loss. Then prints "done" (absent when the
trace ended the process early).
"""

from __future__ import annotations

import gc
import json
import os
import sys
from typing import Any

import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

KERAS_3 = hasattr(tf.keras, "ops")  # Keras 2 and tf_keras have no `keras.ops`
OVERFLOW = 1e5  # beyond float16's largest finite value (65504): cast to float16, it is inf
DATA = [1.0, OVERFLOW, OVERFLOW, 1.0, 1.0, 1.0]
references: list[dict] = []


def make(kind: str, learning_rate: float, **fixed: Any) -> Any:
    if kind == "legacy":  # Keras 2's OptimizerV2 (Keras 2's other concrete class wraps it)
        inner = tf.keras.optimizers.legacy.SGD(learning_rate)
    else:
        inner = tf.keras.optimizers.SGD(learning_rate)
    arguments: dict[str, Any] = fixed or {"initial_scale": 2.0, "dynamic_growth_steps": 2}
    if kind == "compat":
        import compat_lso

        return compat_lso.LossScaleOptimizer(inner, **arguments)
    if kind == "native" and KERAS_3:
        import keras

        return keras.optimizers.LossScaleOptimizer(inner, **arguments)
    return tf.keras.mixed_precision.LossScaleOptimizer(inner, **arguments)


def keras3_form(kind: str) -> bool:
    """Keras 3's own class has only `scale_loss` (and divides in apply_gradients)."""
    return (kind == "native" and KERAS_3) or kind in ("wrapping", "factor")


def train_step(optimizer: Any, kind: str, w: tf.Variable, x: tf.Tensor) -> tf.Tensor:
    with tf.GradientTape() as tape:
        loss = tf.cast(tf.reduce_sum(tf.cast(w, tf.float16) * tf.cast(x, tf.float16)), tf.float32)
        if keras3_form(kind):
            scaled = optimizer.scale_loss(loss)
        else:
            scaled = optimizer.get_scaled_loss(loss)
    grads = tape.gradient(scaled, [w])
    if not keras3_form(kind):
        grads = optimizer.get_unscaled_gradients(grads)
    optimizer.apply_gradients(zip(grads, [w], strict=True))
    return loss


def read(variables: list) -> list[list[Any]]:
    """Per variable: float64 sum (not traced) and sum of squares (the trace's, in float32, agree
    within its rounding) and the fingerprint of the bytes numpy reads (the trace's must be the
    same)."""
    sums: list[list[Any]] = []
    for variable in variables:
        value = np.asarray(variable.numpy())
        wide = value.astype(np.float64)
        raw = np.frombuffer(value.tobytes(), np.uint8)[None]  # the bytes, as one row
        fingerprint = tf.fingerprint(raw).numpy().tobytes().hex()
        sums.append([float(np.sum(wide)), float(np.sum(wide * wide)), fingerprint])
    return sums


def refer(scenario: str, kind: str, variables: list, loss: object, *more: object) -> None:
    """What the trace must show of the step just made: `loss` and `more`, each loss it scaled."""
    values = [float(np.asarray(x, np.float64).sum()) for x in (loss, *more) if x is not None]
    digest = read(variables)
    references.append(
        {
            "scenario": scenario,
            "kind": kind,
            "digest": digest,
            "loss": values[0] if values else None,
            "losses": values,
        }
    )


def new_weights(name: str) -> tf.Variable:
    return tf.Variable(np.array([0.5, 0.25], np.float32), name=name)


def loop(kind: str, scenario: str) -> None:
    optimizer, w = make(kind, 0.1), new_weights(f"w_{scenario}_{kind}")
    step = tf.function(train_step) if scenario == "function" else train_step
    for x in DATA:
        loss = step(optimizer, kind, w, tf.constant([x, 2.0]))
        refer(scenario, kind, [w], loss)


def fixed(kind: str) -> None:
    """A fixed scale (Keras 2's, and compat_lso's on Keras 3; Keras 3's own class has none)
    applies every step, inf gradients too."""
    optimizer = make(kind, 0.1, dynamic=False, initial_scale=8.0)
    w = new_weights(f"w_fixed_{kind}")
    for x in (1.0, OVERFLOW, 1.0):
        loss = train_step(optimizer, kind, w, tf.constant([x, 2.0]))
        refer("fixed", kind, [w], loss)


def factor() -> None:
    """Keras 3's plain optimizers scale a loss with loss_scale_factor (--target keras3's fixed
    scale); one wrapped by a LossScaleOptimizer does not (its constructor sets the factor off)."""
    import keras

    inner = tf.keras.optimizers.SGD(0.1, loss_scale_factor=4.0)
    wrapping = keras.optimizers.LossScaleOptimizer(inner, initial_scale=2.0, dynamic_growth_steps=2)
    w = new_weights("w_wrapping")
    refer("factor", "wrapping", [w], train_step(wrapping, "wrapping", w, tf.constant([1.0, 2.0])))
    plain = tf.keras.optimizers.SGD(0.1, loss_scale_factor=8.0)
    w = new_weights("w_factor")
    for x in (1.0, OVERFLOW, 1.0):
        loss = train_step(plain, "factor", w, tf.constant([x, 2.0]))
        refer("factor", "factor", [w], loss)


def ulp() -> None:
    """Two optimizers, a step each that changes nothing (zero gradients), on weights one ulp
    apart in one element: 0.25 and the next float32 up, 0.25 + 2**-25, below the float32
    rounding of the sum (1.25) and of the sum of squares (1.0625), not of the bytes."""
    for second in (np.float32(0.25), np.nextafter(np.float32(0.25), np.float32(1))):
        optimizer = make("native", 0.1)
        w = tf.Variable(np.array([1.0, second], np.float32), name="w_ulp")
        refer("ulp", "native", [w], train_step(optimizer, "native", w, tf.constant([0.0, 0.0])))


def losses(kind: str) -> None:
    """Two losses scaled through the optimizer each step (a CTC model's two heads), and the
    scale-back `--target keras3` writes, `scale_loss(1.0)`, with a tf.constant too: constants,
    no loss. Eagerly, then in a tf.function, two steps each."""
    optimizer, w = make(kind, 0.1), new_weights(f"w_losses_{kind}")
    scale = optimizer.scale_loss if keras3_form(kind) else optimizer.get_scaled_loss

    def step(x: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        with tf.GradientTape() as tape:
            first = tf.reduce_sum(w * x)
            second = tf.reduce_sum(w * w)
            scaled = scale(first) + scale(second)
        grads = tape.gradient(scaled, [w])
        if keras3_form(kind):  # Keras 2's get_scaled_loss takes tensors only
            scale(1.0)  # a number, not a loss
        if tf.inside_function():  # a tf.constant too (eagerly it is a tensor like any loss)
            scale(tf.constant(1.0))
        if not keras3_form(kind):
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, [w], strict=True))
        return first, second

    for run in (step, tf.function(step)):
        for x in (1.0, 2.0):
            refer("losses", kind, [w], *run(tf.constant([x, -1.0])))


def dropped(kind: str) -> None:
    """An optimizer made and dropped before any step (a model compiled again)."""
    optimizer = make(kind, 0.1)
    del optimizer
    gc.collect()


def two(kind: str, in_function: bool = False) -> None:
    first, second = make(kind, 0.1), make(kind, 0.2)
    w_first, w_second = new_weights(f"w_first_{kind}"), new_weights(f"w_second_{kind}")
    # One function per optimizer: each makes its variables in its own first call.
    steps = {id(o): tf.function(train_step) if in_function else train_step for o in (first, second)}
    for optimizer, w in ((second, w_second), (first, w_first), (second, w_second)):
        loss = steps[id(optimizer)](optimizer, kind, w, tf.constant([1.0, 2.0]))
        refer("two", kind, [w], loss)


def mirrored(kind: str) -> None:
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = new_weights(f"w_mirrored_{kind}")
        optimizer = make(kind, 0.1)
        if KERAS_3:
            # Keras 3 cannot create an optimizer's variables in the first call of a tf.function
            # under MirroredStrategy (tests/distribute/scripts/scenario.py): built in scope.
            optimizer.build([w])

    @tf.function
    def step(x: object) -> object:
        return strategy.run(train_step, args=(optimizer, kind, w, x))

    # Both replicas' data overflow in the second step. (Keras 3's own class skips a step only
    # when the first replica's gradients overflow: its check precedes the all-reduce.)
    for x in (1.0, OVERFLOW, 1.0):
        per_replica = strategy.experimental_distribute_values_from_function(
            lambda context, x=x: tf.constant([x, 2.0 + context.replica_id_in_sync_group])
        )
        losses = strategy.experimental_local_results(step(per_replica))
        refer("mirrored", kind, [w], losses[0])  # the trace's loss is the first replica's


def fit() -> None:
    class ReadAfterEachStep(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: object = None) -> None:
            refer("fit", "fit", model.trainable_variables, None)

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    # Small enough that no float16 gradient overflows at the default scale, 2**15, whatever the
    # initial weights (Glorot's limit here 1.1, |x| <= 0.5: |prediction| < 1.7, each kernel
    # gradient below 4 * 0.5 * 2**15 * 2 * 1.7 / 8, about 28k, float16's largest is 65504), so
    # that every step applies. With y = 1 and |x| <= 1 a step was now and then skipped.
    x = np.linspace(-0.5, 0.5, 24, dtype=np.float32).reshape(8, 3)
    y = np.zeros((8, 2), np.float32)
    model.fit(x, y, batch_size=4, epochs=2, verbose=0, callbacks=[ReadAfterEachStep()])
    tf.keras.mixed_precision.set_global_policy("float32")


def operations() -> dict[str, int]:
    """Operations (Const left out) in a custom-loop step's graph of 1 and of 3 weights, the
    optimizer traced or left out of the trace: what the trace adds to a step, per updated
    variable and once (each operation costs a step some microseconds: issue 31). Traced only."""
    from compat_lso.trace import hooks

    counts = {}
    for traced in (False, True):
        for size in (1, 3):
            optimizer = make("native", 0.1)
            if not traced:
                del vars(optimizer)[hooks._STATE]  # its steps pass the hooks unrecorded
            weights = [new_weights(f"w_operations_{traced}_{size}_{i}") for i in range(size)]
            step = tf.function(lambda x, o=optimizer, w=weights: weights_step(o, w, x))
            graph = step.get_concrete_function(tf.TensorSpec([2])).graph
            name = f"{'traced' if traced else 'plain'} {size}"
            counts[name] = sum(op.type != "Const" for op in graph.get_operations())
    return counts


def weights_step(optimizer: Any, weights: list, x: tf.Tensor) -> None:
    with tf.GradientTape() as tape:
        loss = tf.add_n([tf.reduce_sum(w * x) for w in weights])
        scaled = optimizer.scale_loss(loss) if KERAS_3 else optimizer.get_scaled_loss(loss)
    grads = tape.gradient(scaled, weights)
    if not KERAS_3:
        grads = optimizer.get_unscaled_gradients(grads)
    optimizer.apply_gradients(zip(grads, weights, strict=True))


def main() -> None:
    output, kinds, scenarios = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    try:
        for kind in kinds:
            for scenario in scenarios:
                if scenario in ("eager", "function"):
                    loop(kind, scenario)
                elif scenario in ("two", "two_function"):
                    two(kind, in_function=scenario == "two_function")
                elif scenario == "dropped":
                    dropped(kind)
                elif scenario == "fixed" and not keras3_form(kind):
                    fixed(kind)
                elif scenario == "mirrored":
                    mirrored(kind)
        if "losses" in scenarios:
            losses("native")
        if "ulp" in scenarios:
            ulp()
        if "factor" in scenarios:
            factor()
        if "fit" in scenarios:
            fit()
        counted = operations() if "operations" in scenarios else None
    finally:
        with open(output, "w") as file:
            json.dump({"keras_3": bool(KERAS_3), "steps": references, "operations": counted}, file)
    print("done", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    main()
