"""verify seeds both runs right after TensorFlow's import: COMPAT_LSO_SEED, honoured by
`python -m compat_lso run` and `trace` (one TensorFlow process here).

The program below configures two logical CPUs after importing TensorFlow, which TensorFlow
refuses once its runtime has started: the seeding must not start it. Its random numbers are
compared with the ones Python, NumPy and TensorFlow give after seeding by hand in this process.
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys

import numpy as np

from compat_lso.verify import seed, sides

PROGRAM = """
import json, random, sys
import numpy as np
import tensorflow as tf
from tensorflow.python.framework import config

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
print("RESULT " + json.dumps({
    "random": random.random(),
    "numpy": float(np.random.rand()),
    "tensorflow": float(tf.random.uniform([])),
    "determinism": config.is_op_determinism_enabled(),
    "devices": len(tf.config.list_logical_devices("CPU")),
}))
"""


def test_the_seed_is_set_right_after_tensorflows_import(tmp_path):
    (tmp_path / "program.py").write_text(PROGRAM)
    env = {**os.environ, seed.SEED_VARIABLE: "5", "COMPAT_LSO_TRACE": str(tmp_path / "t")}
    result = subprocess.run(
        [sys.executable, "-m", "compat_lso", "trace", "program.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    seen = json.loads(line.removeprefix("RESULT "))

    import tensorflow as tf

    random.seed(5)
    np.random.seed(5)
    tf.random.set_seed(5)
    assert seen == {
        "random": random.random(),
        "numpy": float(np.random.rand()),
        "tensorflow": float(tf.random.uniform([])),
        "determinism": True,
        "devices": 2,
    }


def test_no_seed_sets_no_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(seed.SEED_VARIABLE, "7")  # the user's own: verify decides
    side = sides.Side("after", ["python"], [], pathlib.Path("t"), pathlib.Path("o"))
    assert seed.SEED_VARIABLE not in sides.environment(side, tmp_path, 3, None)
    assert sides.environment(side, tmp_path, 3, 11)[seed.SEED_VARIABLE] == "11"
