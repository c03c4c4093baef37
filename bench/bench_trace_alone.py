"""The step trace's own work per step, timed alone: what `compat_lso.trace` adds after a step.

    python bench/bench_trace_alone.py [--clock cpu] [--threads N] [--before OTHER_CHECKOUT]

A `tf.function` that reads the bench model's weights (bench_training_step.py's 656k parameters)
and nothing more ("empty") against one that also does what the trace does after each step:
`measure.digest` of the weights and `measure.emit` (its `tf.numpy_function` writes the line to
a file, with the scale, counter, `iterations`, learning rate and loss). `--before DIR`: also the
same work with DIR's `compat_lso/trace/measure.py` (another checkout, e.g. a git worktree of
main), in this process, rounds interleaved. On a loaded machine this tells the trace's cost
apart where the training-step bench (its ratio's spread about 0.05 there) cannot.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import tempfile
import time
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf

from compat_lso.trace import measure
from compat_lso.trace.recorder import Recorder

FEATURES, WIDTH = 256, 512


def _traced(module: Any, variables: list[Any], extra: list[Any], recorder: Recorder) -> Any:
    state = recorder.register("bench", "keras3")
    names = [measure.name(v) for v in variables]
    scale, counter, iterations, rate = extra

    def step(loss: tf.Tensor) -> None:
        digest = module.digest(variables)
        if not hasattr(module, "StepValues"):  # a checkout of before issue 39 (--before)
            values = [tf.convert_to_tensor(v) for v in (scale, scale, counter, iterations, loss)]
            module.emit(recorder, state, "bench:1", names, values, digest=digest)
            return
        values = module.StepValues(scale, scale, counter, iterations, rate, [loss], [])
        about = {"created": "bench:1", "gradients": len(names), "none_gradients": 0}
        module.emit(recorder, state, "bench:1", {**about, "names": names}, values, digest=digest)

    return tf.function(step)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    parser.add_argument("--threads", type=int, default=0, help="TensorFlow's threads (0: its own)")
    parser.add_argument("--before", help="another checkout whose trace to time beside this one")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=100)
    arguments = parser.parse_args()
    if arguments.threads:
        tf.config.threading.set_intra_op_parallelism_threads(arguments.threads)
        tf.config.threading.set_inter_op_parallelism_threads(arguments.threads)
    clock = time.process_time if arguments.clock == "cpu" else time.perf_counter
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential(
        [tf.keras.Input((FEATURES,))]
        + [tf.keras.layers.Dense(WIDTH, activation="relu") for _ in range(3)]
        + [tf.keras.layers.Dense(1)]
    )
    variables = list(model.trainable_variables)
    extra = [
        tf.Variable(32768.0),
        tf.Variable(3, dtype=tf.int64),
        tf.Variable(5, dtype=tf.int64),
        tf.Variable(0.01),  # the learning rate the step reads
    ]
    recorder = Recorder(tempfile.mktemp(suffix=".jsonl"), None, [])

    def empty(loss: tf.Tensor) -> tf.Tensor:
        firsts = [tf.reshape(tf.convert_to_tensor(v), [-1])[:1] for v in variables]
        return tf.add_n([tf.reduce_sum(first) for first in firsts])

    cases = {"empty": tf.function(empty), "trace": _traced(measure, variables, extra, recorder)}
    if arguments.before:
        path = os.path.join(arguments.before, "compat_lso", "trace", "measure.py")
        spec = importlib.util.spec_from_file_location("before_measure", path)
        assert spec is not None and spec.loader is not None, path
        before = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(before)
        cases["trace before"] = _traced(before, variables, extra, recorder)
    loss = tf.constant(0.5)
    for case in cases.values():
        case(loss)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for round_index in range(arguments.rounds):
        order = list(cases) if round_index % 2 == 0 else list(cases)[::-1]
        for name in order:
            start = clock()
            for _ in range(arguments.calls):
                cases[name](loss)
            times[name].append((clock() - start) / arguments.calls * 1e6)
    print(
        f"TensorFlow {tf.__version__}; {sum(v.shape.num_elements() for v in variables)} weights "
        f"in {len(variables)} variables; {arguments.rounds} rounds of {arguments.calls} calls, "
        f"{arguments.clock} clock, threads {arguments.threads or 'default'}"
    )
    print(f"{'case':<14} {'median us':>10} {'min us':>8} {'median - empty':>15}")
    base = statistics.median(times["empty"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<14} {median:>10.0f} {min(values):>8.0f} {median - base:>15.0f}")
    os.remove(recorder.path)


if __name__ == "__main__":
    main()
