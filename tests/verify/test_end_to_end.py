"""`verify` as a user and a CI job run it: a real `--target keras3` migration of a fixed scale,
judged equal; a verify stopped by SIGTERM (a CI timeout) or Ctrl-C, which leaves nothing behind;
its output through a pipe, which shows the header at once and progress lines while it runs.

The project: one script committed in a temporary git repository, TF 2.4's experimental
LossScaleOptimizer with a fixed scale (512) around Adam (the pattern issue 31 met), a custom
loop with get_scaled_loss / get_unscaled_gradients. `--target keras3` makes it a plain
`Adam(1e-2, loss_scale_factor=512)` with `scale_loss`; the before run keeps TF 2.4's meaning
through `run` (compat_lso's fixed-scale class). Both unscale by a power of two, exactly: the same
numbers, bit for bit, which verify must say (before the trace saw `loss_scale_factor`, it said
"the after run made no such step"). Arguments `STEPS SLEEP` make the same script a slow run for
the signal tests. Each verify is two TensorFlow processes; the stopped ones end early.
"""

from __future__ import annotations

import os
import pathlib
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.shim.backend import IS_KERAS_3
from tests.verify.support import git, run_verify

SCRIPT = """\
import sys
import time

import numpy as np
import tensorflow as tf

steps, pause = (int(sys.argv[1]), float(sys.argv[2])) if len(sys.argv) > 2 else (6, 0.0)
tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
model = tf.keras.Sequential(
    [tf.keras.layers.Dense(4, input_shape=(3,)), tf.keras.layers.Dense(1, dtype="float32")]
)
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.keras.optimizers.Adam(1e-2), loss_scale=512
)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


rng = np.random.default_rng(0)
x = rng.normal(size=(8, 3)).astype("float32")
y = rng.normal(size=(8, 1)).astype("float32")
for step in range(steps):
    train_step(x, y)
    time.sleep(pause)
"""
STEPS = 6
KERAS_3_ONLY = pytest.mark.skipif(
    not IS_KERAS_3, reason="--target keras3's loss_scale_factor exists on Keras 3 only"
)
POSIX_ONLY = pytest.mark.skipif(
    not os.path.isdir("/proc"), reason="reads /proc to find processes left running"
)


def _repository(folder: pathlib.Path) -> pathlib.Path:
    folder.mkdir()
    git(folder, "init", "-q")
    git(folder, "config", "user.email", "test@example.com")
    git(folder, "config", "user.name", "test")
    (folder / "train.py").write_text(SCRIPT)
    git(folder, "add", "train.py")
    git(folder, "commit", "-qm", "the old code")
    return folder


def _migrate(repo: pathlib.Path) -> str:
    """`compat-lso-migrate --target keras3 train.py`; the migrated text."""
    migrate = subprocess.run(
        [sys.executable, "-m", "codemods", "--target", "keras3", "train.py"],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    migrated = (repo / "train.py").read_text()
    assert "tf.keras.optimizers.Adam(1e-2, loss_scale_factor=512)" in migrated, migrate.stdout
    return migrated


@KERAS_3_ONLY
def test_a_keras3_migration_to_loss_scale_factor_is_judged_equal(tmp_path):
    repo = _repository(tmp_path / "project")
    migrated = _migrate(repo)
    assert "LossScaleOptimizer" not in migrated and "get_unscaled" not in migrated

    status, output, document = run_verify(repo, ["--steps", str(STEPS), "train.py"])

    assert status == 0, output
    assert f"verify: equal: {STEPS} steps equal (1 loss scale optimizer), bit for bit" in output
    before, after = document["before"]["steps"], document["after"]["steps"]
    assert [s["class"] for s in after] == ["keras.src.optimizers.adam.Adam"] * STEPS
    assert before[0]["class"].startswith("compat_lso.")
    # Both scaled the loss through the optimizer, at 512, every step applied and counted.
    for b, a in zip(before, after, strict=True):
        assert b["loss"] is not None and b["loss"] == a["loss"]
        assert (a["scale_before"], a["scale_after"], a["applied"]) == (512.0, 512.0, True)
        assert b["iterations"] == a["iterations"] == b["step"]


class _Lines:
    """A stream read line by line in a thread: what a CI log shows, as it comes."""

    def __init__(self, stream) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))

    def until(self, wanted, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                continue
            self.seen.append(line)
            if wanted(line):
                return line
        raise AssertionError(f"no such line within {timeout_s} s; seen: {self.seen}")

    def rest(self) -> list[str]:
        time.sleep(0.5)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return self.seen


def _left_running(marker: str) -> list[int]:
    """This user's processes whose environment names `marker` (the runs' trace files do)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _stop(tmp_path: pathlib.Path, number: int, after_steps: bool):
    """verify on a slow run, piped; `number` sent once the header is out (and, if
    `after_steps`, once a progress line shows steps made). Its status, stdout and stderr lines,
    and what it left: temporary folders, worktrees, processes."""
    repo = _repository(tmp_path / "project")
    _migrate(repo)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "compat_lso", "verify", "--steps", "200", "train.py", "200", "0.2"],
        cwd=repo, env={**os.environ, "TMPDIR": str(scratch)}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = _Lines(process.stdout), _Lines(process.stderr)
    try:
        # The header at once, while the runs start (not at the end).
        stdout.until(lambda line: line.startswith("after:"), 60)
        assert process.poll() is None
        if after_steps:
            stderr.until(lambda line: re.match(r"verify: before [1-9]", line) is not None, 240)
        else:
            time.sleep(2)  # both runs started, importing TensorFlow
        running = _left_running(str(scratch))
        process.send_signal(number)
        status = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    worktrees = git(repo, "worktree", "list").splitlines()
    # verify's own folder (TensorFlow's AutoGraph leaves files of its own in TMPDIR).
    folders = list(scratch.glob("compat-lso-verify-*"))
    return status, stdout.rest(), stderr.rest(), running, folders, worktrees


def _nothing_left(stderr, folders, worktrees, scratch: pathlib.Path, how: str) -> None:
    assert stderr[-1] == (
        f"verify: stopped ({how}): both runs ended, the temporary worktree and folder removed; "
        "no verdict"
    ), stderr
    assert not any("Traceback" in line for line in stderr), stderr
    assert folders == [] and len(worktrees) == 1, (folders, worktrees)
    assert _left_running(str(scratch)) == []


@KERAS_3_ONLY
@POSIX_ONLY
def test_sigterm_mid_run_ends_both_runs_and_removes_everything(tmp_path):
    status, stdout, stderr, running, folders, worktrees = _stop(tmp_path, signal.SIGTERM, True)
    assert status == 143, stderr
    assert stdout[0].startswith("before: train.py 200 0.2 at HEAD"), stdout
    assert len(running) >= 2  # both runs were going (their children too, if any)
    # Piped, progress lines came while it ran, on stderr.
    assert any(line.startswith("verify: before ") and " steps (" in line for line in stderr)
    _nothing_left(stderr, folders, worktrees, tmp_path / "tmp", "SIGTERM")


@KERAS_3_ONLY
@POSIX_ONLY
def test_ctrl_c_at_start_ends_both_runs_with_one_line(tmp_path):
    status, _, stderr, running, folders, worktrees = _stop(tmp_path, signal.SIGINT, False)
    assert status == 130, stderr
    assert len(running) >= 2
    _nothing_left(stderr, folders, worktrees, tmp_path / "tmp", "Ctrl-C")
