"""The README's main job: migrate the bundled legacy project and prove the migration exact.

1. Copies examples/legacy_project (TF 2.3-era code, unmodified) and migrates the copy with the
   codemod (`compat-lso-migrate --target shim`), printing the diff.
2. Trains the unmodified original, with the removed names restored by `compat_lso.install()`,
   and the migrated copy, on the installed TensorFlow.
3. Checks that configs, the loss and loss-scale trajectory (a float16 overflow included) and the
   trained weights are identical, and that both match an independent reference: the same
   training worked out in NumPy (examples/reference.py), so that the shim is not only compared
   with itself. Exits non-zero if anything differs.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import types
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

import compat_lso
from compat_lso import _backend

EXAMPLES = pathlib.Path(__file__).parent
LEGACY_PROJECT = EXAMPLES / "legacy_project"


def _load(path: pathlib.Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _migrate(project: pathlib.Path) -> int:
    command = [sys.executable, "-m", "codemods", "--target", "shim", "--diff", str(project)]
    # Exit status 1 means "files changed": the caller checks it, so no check=True here.
    diff = subprocess.run(command, capture_output=True, text=True, check=False)
    print(diff.stdout + diff.stderr)
    rewrite = subprocess.run(
        [*command[:-2], str(project)], capture_output=True, text=True, check=False
    )
    return rewrite.returncode


def main() -> int:
    print(
        f"TensorFlow {tf.__version__}, tf.keras is {_backend.keras_package().__name__} "
        f"{_backend.keras_version()}\n"
    )
    with tempfile.TemporaryDirectory() as workdir:
        migrated_project = pathlib.Path(workdir) / "migrated_project"
        shutil.copytree(LEGACY_PROJECT, migrated_project)
        print(f"$ compat-lso-migrate --target shim --diff {LEGACY_PROJECT.name}")
        migrate_status = _migrate(migrated_project)
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
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
