"""The README's main job: migrate the bundled legacy project and prove the migration exact.

1. Copies examples/legacy_project (TF 2.3-era code, unmodified) and migrates the copy with the
   codemod (`compat-lso-migrate --target shim`), printing the diff.
2. Trains the unmodified original, with the removed names restored by `compat_lso.install()`,
   and the migrated copy, on the installed TensorFlow.
3. Checks that configs, the loss and loss-scale trajectory (a float16 overflow included) and the
   trained weights are identical, and that both match an independent reference: the same
   training worked out in NumPy (examples/reference.py), so that the shim is not only compared
   with itself.
4. Ends as a user would: the project committed to a git repository of its own, migrated there,
   and `python -m compat_lso verify train.py` (old code at HEAD against the migrated working
   tree, step by step), whose verdict it prints. Exits non-zero if anything differs.

The demo runs itself in a child process whose stderr it filters: TensorFlow's C++ libraries log
(oneDNN, the cudart stub, cuInit) before absl::InitializeLog() is called, and those lines ignore
TF_CPP_MIN_LOG_LEVEL, so only a filter keeps them from drowning the demo's own output.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import types
import warnings

EXAMPLES = pathlib.Path(__file__).parent
LEGACY_PROJECT = EXAMPLES / "legacy_project"

# Set in the child process that runs the demo (see _run_filtered).
_CHILD = "COMPAT_LSO_DEMO_CHILD"
# TensorFlow's C++ log lines: `I0000 00:00:1795629667.166547    9540 port.cc:153] ...` (TF 2.16+,
# absl), `2026-11-25 18:24:19.058093: E external/.../cuda_dnn.cc:9261] ...` (TF <= 2.15), and the
# banner absl prints before its logging is initialised.
_NATIVE_LOG = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog\(\) is called"
    r"|[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ [\w.]+:\d+\] "
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] \S+:\d+\] )"
)
# What TensorFlow logs from C++ after start-up: errors only (cuInit on a machine without a GPU is
# one), which the filter drops too.
QUIET_TF = {"TF_CPP_MIN_LOG_LEVEL": "3"}


def _run_filtered() -> int:
    """Run this script again in a child process, passing its stderr on without TF's C++ log."""
    env = {**os.environ, **QUIET_TF, _CHILD: "1"}
    child = subprocess.Popen(
        [sys.executable, __file__, *sys.argv[1:]], env=env, stderr=subprocess.PIPE, text=True
    )
    assert child.stderr is not None
    for line in child.stderr:
        if not _NATIVE_LOG.match(line):
            sys.stderr.write(line)
    return child.wait()


def _load(path: pathlib.Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _migrate(workdir: pathlib.Path, arguments: list[str]) -> int:
    """Run the codemod in `workdir` as a user would, printing the command and what it prints."""
    # `python -m codemods` is the compat-lso-migrate command; shown as the command a user types.
    print(f"$ {shlex.join(['compat-lso-migrate', *arguments])}")
    # Exit status 1 means "files changed": the caller checks it, so no check=True here.
    run = subprocess.run(
        [sys.executable, "-m", "codemods", *arguments],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    print(run.stdout + run.stderr)
    return run.returncode


def main() -> int:
    import numpy as np
    import tensorflow as tf

    import compat_lso
    from compat_lso import _backend

    # TensorFlow's Python log (Keras 2 warns that mixed_float16 runs slowly without a GPU): not
    # what the demo shows. Python warnings still reach it, and it prints the ones that matter.
    tf.get_logger().setLevel("ERROR")
    print(
        f"TensorFlow {tf.__version__}, tf.keras is {_backend.keras_package().__name__} "
        f"{_backend.keras_version()}\n"
    )
    with tempfile.TemporaryDirectory() as workdir:
        # A copy under the original's name, so that the codemod shows the paths a user sees.
        migrated_project = pathlib.Path(workdir) / LEGACY_PROJECT.name
        shutil.copytree(LEGACY_PROJECT, migrated_project)
        _migrate(migrated_project.parent, ["--target", "shim", "--diff", LEGACY_PROJECT.name])
        migrate_status = _migrate(
            migrated_project.parent, ["--target", "shim", LEGACY_PROJECT.name]
        )
        migrated = _load(migrated_project / "train.py", "migrated_train")

        compat_lso.install()  # the removed names, before the unmodified code imports them
        legacy = _load(LEGACY_PROJECT / "train.py", "legacy_train")

        batches = legacy.make_batches()
        # build_model() seeds itself: these are the weights both runs start from.
        by_hand = _load(EXAMPLES / "reference.py", "reference")
        expected = by_hand.train(batches, legacy.build_model().get_weights())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DeprecationWarning)
            old_model, old_optimizer, old_history = legacy.train(batches)
        for warning in caught:
            if "compat_lso" in str(warning.message):
                print(f"warning from the unmodified code: {warning.message}\n")
        # Trained while the migrated copy still exists: autograph reads its source.
        new_model, new_optimizer, new_history = migrated.train(batches)

    print(
        f"{'step':>4}  {'loss (old API)':>14}  {'scale':>6}  {'loss (migrated)':>15}  {'scale':>6}"
        f"  {'loss (NumPy)':>12}  {'scale':>6}"
    )
    for step, ((old_loss, old_scale), (new_loss, new_scale), (ref_loss, ref_scale)) in enumerate(
        zip(old_history, new_history, expected[0], strict=False)
    ):
        note = "  <- overflow: step skipped, scale halved" if step == legacy.OVERFLOW_STEP else ""
        print(
            f"{step:>4}  {old_loss:>14.4f}  {old_scale:>6.0f}  {new_loss:>15.4f}  "
            f"{new_scale:>6.0f}  {ref_loss:>12.4f}  {ref_scale:>6.0f}{note}"
        )
    problems = {
        name: by_hand.mismatches(history, model.get_weights(), expected)
        for name, history, model in (
            ("old", old_history, old_model),
            ("migrated", new_history, new_model),
        )
    }

    checks = {
        "the codemod rewrote the project (exit status 1: files changed)": migrate_status == 1,
        "configs equal": old_optimizer.get_config() == new_optimizer.get_config(),
        "loss and scale trajectories equal": np.array_equal(
            old_history, new_history, equal_nan=True
        ),
        "trained weights equal": all(
            np.array_equal(a, b)
            for a, b in zip(old_model.get_weights(), new_model.get_weights(), strict=True)
        ),
        "overflow step skipped and scale halved": old_history[legacy.OVERFLOW_STEP][1]
        == old_history[legacy.OVERFLOW_STEP - 1][1] / 2,
        "iterations count the skipped step": int(old_optimizer.iterations) == legacy.STEPS,
        "both match the NumPy reference (scales exactly; losses, weights to float16 rounding)": (
            not problems["old"] and not problems["migrated"]
        ),
    }
    print()
    for name, passed in checks.items():
        print(f"{'ok  ' if passed else 'FAIL'} {name}")
    for name, found in problems.items():
        for problem in found:
            print(f"     {name}: {problem}")
    verified = _verify()
    print(f"{'ok  ' if verified else 'FAIL'} verify: the migrated project trains as the old one")
    return 0 if all(checks.values()) and verified else 1


def _verify() -> bool:
    """The project in a git repository of its own, migrated, then `verify` as a user runs it."""
    with tempfile.TemporaryDirectory() as workdir:
        project = pathlib.Path(workdir) / LEGACY_PROJECT.name
        shutil.copytree(LEGACY_PROJECT, project)
        identity = ["-c", "user.name=compat-lso demo", "-c", "user.email=demo@example.invalid"]
        for command in (
            ["git", "init", "-q"],
            ["git", "add", "."],
            ["git", *identity, "commit", "-qm", "the old code"],
        ):
            subprocess.run(command, cwd=project, capture_output=True, check=True)
        print(
            f"\n$ cd {LEGACY_PROJECT.name} && git init && git add . && git commit -m 'the old code'"
        )
        _migrate(project, ["--target", "shim", "."])
        print("$ python -m compat_lso verify train.py")
        # Its stdout and stderr as one stream, in the order a terminal shows them: the
        # progress lines (stderr) before the verdict (stdout), TensorFlow's C++ log left out.
        run = subprocess.run(
            [sys.executable, "-m", "compat_lso", "verify", "train.py"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        )
        print("".join(
            line + "\n" for line in run.stdout.splitlines() if not _NATIVE_LOG.match(line)
        ))  # fmt: skip
        return run.returncode == 0


if __name__ == "__main__":
    sys.exit(main() if os.environ.get(_CHILD) else _run_filtered())
