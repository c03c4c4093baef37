"""Training-step cost of compat_lso's LossScaleOptimizer relative to the backend's native class.

Run on one backend (its nox env):  python bench/bench_training_step.py [--steps 150] [--rounds 5]

First it prints the size of the traced custom-loop step (Keras 3 form on Keras 3, TF 2.4 form
on Keras 2) for each class: the operations of the step's graph ("top level": what runs every
step outside a branch) and with the operations inside `tf.cond` branches counted too ("with
branches": each step runs only one branch of each).

Both classes train the same model on the same data in this process. Rounds alternate native and
compat so that drift on a noisy machine hits both alike; the figure is the median over rounds of
compat time / native time (target: <= 1.02). Cases: Model.fit, a custom tf.function loop, and
both again with XLA (jit_compile=True). On Keras 3 the custom loop is run in Keras 3's own form
(scale_loss, then apply_gradients with scaled gradients) for both classes, and additionally in
the TF 2.4 form (get_scaled_loss / get_unscaled_gradients) for the compat class, against the
native class's Keras 3 loop.

`--installed` (Keras 3) measures instead what `compat_lso.install()` puts in place: the TF 2.4
name `tf.keras.mixed_precision.LossScaleOptimizer` built while installed, against the native
class, and `compile()`'s own wrapping under `mixed_float16` while installed (the shim's class
with Keras 2's rule) against Keras 3's wrapping.

`--audit` (Keras 3) measures the runtime audit (`compat_lso.audit`, `run --audit`): the shim's
class with the audit on against the same class with it off, in this process (rounds alternate
as above; target: <= 1.10x). The traced step's operations are printed for both: off must equal
the plain class's count (the audit adds nothing while off).

`--trace` measures the step trace (`compat_lso.trace`, what `verify` runs): the backend's own
class with the trace on (every step written to a temporary file) against the same class left
out of the trace, in this process, in Model.fit and a custom tf.function loop (no XLA: the
trace's `tf.numpy_function` cannot be compiled). Target: <= 1.10x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

import compat_lso
from compat_lso import _backend, audit, trace
from compat_lso.trace import hooks as trace_hooks

NATIVE = tf.keras.mixed_precision.LossScaleOptimizer
KERAS_3 = _backend.keras_version() >= _backend.KERAS_3
FEATURES, WIDTH = 256, 512


class Batch:
    """Examples per step (`--batch`; set in main())."""

    size = 256


class Clock:
    """Wall time by default; `--clock cpu` counts this process's CPU time over all its threads,
    which other processes on a loaded machine disturb far less (set in main())."""

    now: Callable[[], float] = time.perf_counter


def _data(steps: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(steps * Batch.size, FEATURES)).astype("float32")
    y = rng.normal(size=(steps * Batch.size, 1)).astype("float32")
    return x, y


def _model() -> tf.keras.Model:
    tf.keras.utils.set_random_seed(0)
    return tf.keras.Sequential(
        [tf.keras.Input((FEATURES,))]
        + [tf.keras.layers.Dense(WIDTH, activation="relu") for _ in range(3)]
        + [tf.keras.layers.Dense(1)]
    )


def _optimizer(kind: str) -> Any:
    inner = tf.keras.optimizers.SGD(0.001)
    if kind == "audited":  # the shim's class, built and traced while the audit is on
        audit.enable()
        return compat_lso.LossScaleOptimizer(inner)
    if kind == "traced":  # the backend's own class, recorded by the trace (enabled in main())
        return NATIVE(inner)
    if kind == "installed":
        compat_lso.install()
        try:
            return tf.keras.mixed_precision.LossScaleOptimizer(inner)  # the TF 2.4 name
        finally:
            compat_lso.uninstall()
    optimizer = NATIVE(inner) if kind == "native" else compat_lso.LossScaleOptimizer(inner)
    # With --trace, the reference is left out of the trace: its steps pass the hooks unrecorded.
    optimizer.__dict__.pop(trace_hooks._STATE, None)
    return optimizer


def fit_runner(kind: str, steps: int, jit_compile: bool) -> Callable[[], float]:
    model = _model()
    model.compile(optimizer=_optimizer(kind), loss="mse", jit_compile=jit_compile)
    x, y = _data(steps)
    warm_up = 2 * Batch.size
    model.fit(x[:warm_up], y[:warm_up], batch_size=Batch.size, verbose=0)  # trace and warm up

    def run() -> float:
        start = Clock.now()
        model.fit(x, y, batch_size=Batch.size, epochs=1, shuffle=False, verbose=0)
        return Clock.now() - start

    return run


def compile_wraps_runner(kind: str, steps: int, jit_compile: bool) -> Callable[[], float]:
    """Model.fit under mixed_float16 with a plain optimizer: compile() adds the loss scaling."""
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = _model()
        if kind == "installed":
            compat_lso.install()
        try:
            model.compile(tf.keras.optimizers.SGD(0.001), loss="mse", jit_compile=jit_compile)
        finally:
            compat_lso.uninstall()
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    expected = compat_lso.LossScaleOptimizer if kind == "installed" else NATIVE
    assert type(model.optimizer) is expected, type(model.optimizer)
    x, y = _data(steps)
    model.fit(x[: 2 * Batch.size], y[: 2 * Batch.size], batch_size=Batch.size, verbose=0)

    def run() -> float:
        start = Clock.now()
        model.fit(x, y, batch_size=Batch.size, epochs=1, shuffle=False, verbose=0)
        return Clock.now() - start

    return run


def installed_cases(steps: int) -> dict[str, tuple[Any, Any]]:
    cases = {}
    for jit in (False, True):
        suffix = " (XLA)" if jit else ""
        cases[f"Model.fit, TF 2.4 name while installed{suffix}"] = (
            lambda jit=jit: fit_runner("native", steps, jit),
            lambda jit=jit: fit_runner("installed", steps, jit),
        )
        cases[f"Model.fit, mixed_float16, compile() wraps{suffix}"] = (
            lambda jit=jit: compile_wraps_runner("native", steps, jit),
            lambda jit=jit: compile_wraps_runner("installed", steps, jit),
        )
    return cases


def _step(model: Any, optimizer: Any, form: str, jit_compile: bool) -> Any:
    """The custom-loop step: TF 2.4's get_scaled_loss/get_unscaled_gradients ("tf24") or Keras 3's
    scale_loss, with apply_gradients dividing ("keras3")."""

    @tf.function(jit_compile=jit_compile)
    def step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled = (
                optimizer.get_scaled_loss(loss) if form == "tf24" else optimizer.scale_loss(loss)
            )
        grads = tape.gradient(scaled, model.trainable_variables)
        if form == "tf24":
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    return step


def loop_runner(kind: str, steps: int, jit_compile: bool, form: str) -> Callable[[], float]:
    model = _model()
    optimizer = _optimizer(kind)
    x, y = _data(steps)
    batches = [
        (tf.constant(x[i : i + Batch.size]), tf.constant(y[i : i + Batch.size]))
        for i in range(0, steps * Batch.size, Batch.size)
    ]

    step = _step(model, optimizer, form, jit_compile)

    step(*batches[0])

    def run() -> float:
        start = Clock.now()
        for batch in batches:
            loss = step(*batch)
        float(loss)
        return Clock.now() - start

    return run


def _count_operations(graph_def: Any) -> tuple[int, int]:
    top_level = len(graph_def.node)
    return top_level, top_level + sum(len(f.node_def) for f in graph_def.library.function)


def traced_step_operations(kind: str, form: str) -> tuple[int, int]:
    """Operations in the traced custom-loop step of `kind`'s optimizer (same model as timed)."""
    model = _model()
    optimizer = _optimizer(kind)

    step = _step(model, optimizer, form, jit_compile=False)

    x, y = tf.zeros((Batch.size, FEATURES)), tf.zeros((Batch.size, 1))
    step(x, y)  # the first call builds the optimizer's variables
    return _count_operations(step.get_concrete_function(x, y).graph.as_graph_def())


def audit_cases(steps: int) -> dict[str, tuple[Any, Any]]:
    """The shim's class with the audit off (native side) against on (compat side)."""
    cases = {}
    for jit in (False, True):
        suffix = " (XLA)" if jit else ""
        cases[f"Model.fit, audit on vs off{suffix}"] = (
            lambda jit=jit: fit_runner("compat", steps, jit),
            lambda jit=jit: fit_runner("audited", steps, jit),
        )
        cases[f"custom loop, TF 2.4 form, audit on vs off{suffix}"] = (
            lambda jit=jit: loop_runner("compat", steps, jit, "tf24"),
            lambda jit=jit: loop_runner("audited", steps, jit, "tf24"),
        )
    return cases


def trace_cases(steps: int, form: str) -> dict[str, tuple[Any, Any]]:
    """The backend's own class left out of the trace (native side) against recorded (compat)."""
    return {
        "Model.fit, trace on vs off": (
            lambda: fit_runner("native", steps, False),
            lambda: fit_runner("traced", steps, False),
        ),
        f"custom loop, {form} form, trace on vs off": (
            lambda: loop_runner("native", steps, False, form),
            lambda: loop_runner("traced", steps, False, form),
        ),
    }


def ratio(
    make_native: Callable[[], Callable[[], float]],
    make_compat: Callable[[], Callable[[], float]],
    rounds: int,
) -> tuple[float, float, float]:
    native, compat = make_native(), make_compat()
    audit.disable()  # the audited step keeps its counting; later cases trace without the audit
    ratios = []
    for round_index in range(rounds):
        # Alternate which goes first, so neither always runs on a warmer machine.
        if round_index % 2 == 0:
            native_time, compat_time = native(), compat()
        else:
            compat_time, native_time = compat(), native()
        ratios.append(compat_time / native_time)
    return statistics.median(ratios), min(ratios), max(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=256, help="examples per step (default 256)")
    parser.add_argument(
        "--installed",
        action="store_true",
        help="Keras 3: what install() puts in place, against the native class",
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="time per run: wall clock (default), or this process's CPU time (a loaded machine)",
    )
    parser.add_argument(
        "--audit",
        action="store_true",
        help="Keras 3: the shim's class with the runtime audit on, against it off",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="the step trace on (every step written to a file) against off, same class",
    )
    arguments = parser.parse_args()
    steps, rounds = arguments.steps, arguments.rounds
    Batch.size = arguments.batch
    Clock.now = time.process_time if arguments.clock == "cpu" else time.perf_counter
    if arguments.installed and not KERAS_3:
        parser.error("--installed needs Keras 3: on Keras 2 install() replaces nothing")
    if arguments.audit and not KERAS_3:
        parser.error("--audit needs Keras 3: on Keras 2 the audit has nothing to record")

    native_loop_form = "keras3" if KERAS_3 else "tf24"
    cases = installed_cases(steps) if arguments.installed else {}
    if arguments.audit:
        cases = audit_cases(steps)
    if arguments.trace:
        trace_file = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False)  # noqa: SIM115
        trace.enable(trace_file.name)
        cases = trace_cases(steps, native_loop_form)
    for jit in (
        (False, True) if not (arguments.installed or arguments.audit or arguments.trace) else ()
    ):
        suffix = " (XLA)" if jit else ""
        cases[f"Model.fit{suffix}"] = (
            lambda jit=jit: fit_runner("native", steps, jit),
            lambda jit=jit: fit_runner("compat", steps, jit),
        )
        cases[f"custom loop, {native_loop_form} form{suffix}"] = (
            lambda jit=jit: loop_runner("native", steps, jit, native_loop_form),
            lambda jit=jit: loop_runner("compat", steps, jit, native_loop_form),
        )
        if KERAS_3:
            cases[f"custom loop, compat TF 2.4 form vs native Keras 3 form{suffix}"] = (
                lambda jit=jit: loop_runner("native", steps, jit, "keras3"),
                lambda jit=jit: loop_runner("compat", steps, jit, "tf24"),
            )

    print(
        f"TensorFlow {tf.__version__}, tf.keras = {_backend.keras_package().__name__} "
        f"{_backend.keras_version()}; {steps} steps of batch {Batch.size}, {rounds} interleaved "
        f"rounds, {arguments.clock} clock"
    )
    print("traced custom-loop step: operations (top level / with branches)")
    traced = [("native", native_loop_form), ("compat", native_loop_form)]
    if KERAS_3:
        traced.append(("compat", "tf24"))
    if arguments.audit:
        traced.append(("audited", "tf24"))
    if arguments.trace:
        traced.append(("traced", native_loop_form))
    for kind, form in traced:
        top_level, with_branches = traced_step_operations(kind, form)
        audit.disable()
        print(f"  {kind + ', ' + form + ' form':<22} {top_level:>4} / {with_branches}")
    ratio_name = "on/off" if arguments.audit or arguments.trace else "compat/native"
    print(f"{'case':<62} {ratio_name:>13} {'min':>6} {'max':>6}")
    for name, (make_native, make_compat) in cases.items():
        median, low, high = ratio(make_native, make_compat, rounds)
        print(f"{name:<62} {median:>12.3f}x {low:>6.3f} {high:>6.3f}")


if __name__ == "__main__":
    main()
