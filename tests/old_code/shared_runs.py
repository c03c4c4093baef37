"""The old scripts' runs that test_run_unmodified.py, test_tf24_scripts.py and test_gan_project.py
share.

A TensorFlow start-up costs a slow machine about 10 s, more than most of these scripts' training:
the scripts of the three files run together, one process per way of running them (harness.py,
batch.py), not one per file and way. The three files run on one pytest-xdist worker
(tests/conftest.py's SHARED_PROCESSES), so each process starts once per session.

The TF 2.1-2.3 scripts are scripts/*.py, written as TF 2.2-2.4 code was, with their twins in
scripts/migrated/ (the same program on the non-experimental API); the TF 2.4-2.15 scripts are
scripts/tf24/*.py, with what TF 2.15 reported for them in references/tf24.tf215.json; the test
projects are scripts/projects/*/ (references/projects.tf215.json).
"""

from __future__ import annotations

import functools
import pathlib
from typing import Any

from tests.old_code import harness, record
from tests.shim.backend import IS_KERAS_3

TESTS = pathlib.Path(__file__).parents[1]
SCRIPTS = pathlib.Path(__file__).parent / "scripts"
TF24_REFERENCE_FILE = pathlib.Path(__file__).parent / "references" / "tf24.tf215.json"
TF24_REFERENCE = record.load(TF24_REFERENCE_FILE)
# mirrored_strategy first: it splits the CPU into two logical devices, which TensorFlow allows
# only before it initialises them, i.e. before any other script of its process ran. A process
# holds at most one such script; the scripts after it run on the first logical device, as they
# would on the one CPU device.
EXPERIMENTAL = [
    SCRIPTS / f"{name}.py" for name in ("mirrored_strategy", "fit_with_policy", "custom_loop")
]
MIGRATED = [SCRIPTS / "migrated" / script.name for script in EXPERIMENTAL]
# fit_with_policy.py is not migrated: its Policy(..., loss_scale=...) needs manual work, which the
# codemod reports (LSO006) instead of rewriting.
EXPERIMENTAL_TO_MIGRATE = [SCRIPTS / "mirrored_strategy.py", SCRIPTS / "custom_loop.py"]
TF24 = [TESTS / script for script in sorted(TF24_REFERENCE)]
# The test projects (test_gan_project.py): the GAN project, written as TF 2.3-2.8 code, whose TF
# 2.15 twin (gan_tf24/) was recorded, and a loss scale optimizer over a legacy SGD shared by two
# models (TF 2.11-2.15 code, recorded itself). Run on Keras 3, where their meaning is at stake (on
# Keras 2 backends TF 2.15's own default Adam refuses the GAN's second model, as it did natively).
PROJECTS = SCRIPTS / "projects"
PROJECTS_REFERENCE_FILE = pathlib.Path(__file__).parent / "references" / "projects.tf215.json"
PROJECTS_REFERENCE = record.load(PROJECTS_REFERENCE_FILE)
GAN = PROJECTS / "gan" / "train.py"
GAN_TWIN = PROJECTS / "gan_tf24" / "train.py"
SHARED_SGD = PROJECTS / "shared_sgd" / "train.py"
_PROJECTS_RUN = [GAN, SHARED_SGD] if IS_KERAS_3 else []
_GAN = [GAN] if IS_KERAS_3 else []
# The TF 2.4 script run through the start-up hook (and install() first in a fresh process, in
# test_command_forms.py); `run` covers every script.
TF24_ONE = TESTS / "old_code" / "scripts" / "tf24" / "custom_loop.py"

# The processes, each as {mode: scripts}. `run` and the start-up hook install the shim at start;
# the plain modes (harness.PLAIN_MODES) run scripts as `python SCRIPT` would, several per process,
# one process per script that configures devices. TF 2.4 code runs natively on Keras 2 only
# (Keras 3's class has another meaning), and --target keras3's output on Keras 3 only.
# The GAN project migrated to the shim comes last in its process: the migration adds
# compat_lso.install() at its start (its Policy keeps a loss scale), which stays installed.
if IS_KERAS_3:
    _PLAIN = {"native": MIGRATED, "migrate-keras3": [*TF24, *_GAN]}
else:
    _PLAIN = {"native": [*MIGRATED, *TF24]}
PROCESSES: list[dict[str, list[pathlib.Path]]] = [
    {"run": [*EXPERIMENTAL, *TF24, *_PROJECTS_RUN]},
    {"startup-hook": [SCRIPTS / "custom_loop.py", TF24_ONE]},
    _PLAIN,
    {"migrate-shim": [*EXPERIMENTAL_TO_MIGRATE, *TF24, *_GAN]},
]


@functools.cache
def _process(index: int) -> dict[str, dict[pathlib.Path, Any]]:
    ways = PROCESSES[index]
    # scripts/ on PYTHONPATH: the migrated twins import its common.py (helpers with no
    # loss-scaling code); each other script finds its own folder's first.
    if set(ways) <= set(harness.PLAIN_MODES):
        return harness.run_plain_modes(ways, pythonpath=[SCRIPTS])
    [(mode, scripts)] = ways.items()
    return {mode: harness.run_scripts(scripts, mode, pythonpath=[SCRIPTS])}


def result(script: pathlib.Path, mode: str) -> dict[str, Any]:
    """What `script` reported, run in `mode` in its shared process; its failure raised."""
    index = next(i for i, ways in enumerate(PROCESSES) if script in ways.get(mode, []))
    outcome = _process(index)[mode][script.resolve()]
    if isinstance(outcome, harness.ScriptFailed):
        raise outcome
    return outcome
