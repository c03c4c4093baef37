"""Import cost of compat_lso on top of TensorFlow and Keras, in fresh processes.

    python bench/bench_import.py [--runs 7]

Each run is a new interpreter that imports TensorFlow and touches tf.keras (what any Keras
program pays), then measures `import compat_lso` (target: <= 30 ms) and the first use of
`compat_lso.LossScaleOptimizer`, which imports the shim's backend module. It also checks that
the runtime never imports libcst.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

PROBE = r"""
import json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf
tf.keras.optimizers.SGD
start = time.perf_counter(); import compat_lso; imported = time.perf_counter() - start
start = time.perf_counter(); compat_lso.LossScaleOptimizer; first_use = time.perf_counter() - start
print(json.dumps({"import": imported, "first_use": first_use, "libcst": "libcst" in sys.modules}))
"""


def _probe() -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    )
    timings: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    probes = [_probe() for _ in range(runs)]
    import_ms = statistics.median(p["import"] for p in probes) * 1000
    first_use_ms = statistics.median(p["first_use"] for p in probes) * 1000
    print(
        f"import compat_lso, after tensorflow and tf.keras: {import_ms:.1f} ms (median of {runs}; "
        f"target <= 30 ms)"
    )
    print(
        f"first compat_lso.LossScaleOptimizer (imports the backend module): {first_use_ms:.1f} ms"
    )
    print(f"libcst imported by the runtime: {any(p['libcst'] for p in probes)}")


if __name__ == "__main__":
    main()
