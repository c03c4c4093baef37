"""`verify --before-python`: the old code on the old TensorFlow itself (TF 2.15, Keras 2), the
migrated code on this one (Keras 3), compared within the two releases' float16 rounding.

Needs an interpreter with TF 2.15 (`COMPAT_LSO_TF215_PYTHON`, which noxfile.py's verify_e2e
session sets to the tests(tf215) environment's Python where that exists). Two verifies, run at
once in one module fixture (four TensorFlow processes):

- the bundled example project (examples/legacy_project/train.py), migrated with --target shim:
  equal within 2**-7, though no step is equal bit for bit (TF 2.15 and TF 2.21 round float16
  apart from step 1: measured, 5e-5 relative at step 1, 8e-4 at step 12), with the same skipped
  step 7 (Keras 2's rule on both sides: the shim keeps it);
- a TF 2.15 program with `@tf.function` on a layer's `call` and an optimizer subclass that
  halves its rate in `_decayed_lr` (issue 39, case 9), migrated as a user would (--target
  keras3, then LSO024's help: the legacy SGD becomes Keras 3's): Keras 3 gives the variables the
  layer makes inside its tf.function no gradient (TF 2.15 gives all 4) and never calls the
  override (rate 0.1 where TF 2.15 used 0.05). It diverges at step 1 naming both; on TF 2.21
  alone (both sides there) the same None gradients and rate would be equal.
"""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import subprocess
import sys

import pytest

from tests.shim.backend import IS_KERAS_3
from tests.verify.support import git, run_verify

ROOT = pathlib.Path(__file__).parents[2]
VARIABLE = "COMPAT_LSO_TF215_PYTHON"
BEFORE_PYTHON = os.environ.get(VARIABLE, "")
pytestmark = [
    pytest.mark.skipif(
        not BEFORE_PYTHON,
        reason=f"{VARIABLE} names no TF 2.15 interpreter (nox -s verify_e2e sets it to the "
        'tests(tf215) environment\'s, once `nox -s "tests(tf215)"` made it)',
    ),
    pytest.mark.skipif(not IS_KERAS_3, reason="the after side is today's TensorFlow: Keras 3"),
]

UPGRADE = '''\
"""TF 2.15: a layer whose call is one tf.function, an SGD that halves its learning rate."""

import numpy as np
import tensorflow as tf


class Block(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(8, activation="relu")

    @tf.function
    def call(self, x):
        return self.dense(x)


class HalvedSGD(tf.keras.optimizers.legacy.SGD):
    def _decayed_lr(self, var_dtype):
        return super()._decayed_lr(var_dtype) * 0.5


tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential(
    [tf.keras.Input(shape=(4,)), Block(), tf.keras.layers.Dense(1, dtype="float32")]
)
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(HalvedSGD(0.1))
x = np.linspace(-1.0, 1.0, 64, dtype="float32").reshape(16, 4)
y = x.sum(axis=1, keepdims=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(3):
    train_step(x, y)
'''


def _project(folder: pathlib.Path, text: str, target: str) -> pathlib.Path:
    """`text` committed as train.py, migrated to `target` in the working tree."""
    folder.mkdir()
    git(folder, "init", "-q")
    git(folder, "config", "user.email", "test@example.com")
    git(folder, "config", "user.name", "test")
    (folder / "train.py").write_text(text)
    git(folder, "add", "train.py")
    git(folder, "commit", "-qm", "the old code")
    subprocess.run(
        [sys.executable, "-m", "codemods", "--target", target, "train.py"],
        cwd=folder, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("before-python")
    example = _project(
        scratch / "example", (ROOT / "examples" / "legacy_project" / "train.py").read_text(), "shim"
    )
    upgrade = _project(scratch / "upgrade", UPGRADE, "keras3")
    migrated = (upgrade / "train.py").read_text()
    assert "tf.keras.optimizers.legacy.SGD" in migrated  # LSO024: manual, its help followed
    (upgrade / "train.py").write_text(migrated.replace("optimizers.legacy.SGD", "optimizers.SGD"))
    runs = {
        "example": (example, ["--before-python", BEFORE_PYTHON, "train.py"]),
        "upgrade": (upgrade, ["--before-python", BEFORE_PYTHON, "--steps", "2", "train.py"]),
    }
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(run_verify, *run) for name, run in runs.items()}
        return {name: future.result() for name, future in futures.items()}


def test_the_example_project_on_tf_2_15_is_equal_within_float16_rounding(verdicts):
    status, output, document = verdicts["example"]
    assert status == 0, output
    assert document["before"]["versions"]["tensorflow"].startswith("2.15."), output
    assert (
        document["after"]["versions"]["tensorflow"] != document["before"]["versions"]["tensorflow"]
    )
    assert document["rtol"] == 2.0**-7
    assert "verify: equal: 12 steps equal (1 loss scale optimizer; the program ended" in output
    assert "not bit for bit, within rtol=0.0078125" in output  # the releases round apart
    before, after = document["before"]["steps"], document["after"]["steps"]
    # The same skipped step (Keras 2's rule on both sides), the same learning rate and scale.
    for b, a in zip(before, after, strict=True):
        assert (b["applied"], b["iterations"], b["scale_before"]) == (
            a["applied"], a["iterations"], a["scale_before"]
        )  # fmt: skip
        assert b["learning_rate"] == a["learning_rate"] == pytest.approx(0.05)
    assert [s["applied"] for s in before].index(False) == 6


def test_a_tf_function_on_a_layers_call_diverges_at_step_1_naming_the_none_gradients(verdicts):
    status, output, document = verdicts["upgrade"]
    assert status == 1, output
    divergence = document["divergence"]
    assert divergence["step"] == 1, output
    fields = {d["field"]: (d["before"], d["after"]) for d in divergence["differences"]}
    assert fields["none_gradients"] == ("0 of 4", "2 of 4"), output
    # HalvedSGD's _decayed_lr: TF 2.15's legacy SGD calls it, Keras 3's SGD never does.
    assert fields["learning_rate"] == (pytest.approx(0.05), pytest.approx(0.1)), output
    assert "gradients None: 0 of 4 before, 2 of 4 after" in output
    assert "not loss scaling: gradients None in one run only and another learning rate" in output
