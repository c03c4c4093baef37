"""Run an old-code script in a fresh process, in one of several modes, and read what it reports.

A script reports by printing one line `RESULT {json}` (its last such line counts). Modes:

    native        python SCRIPT                          the installed TensorFlow as it is
    run           python -m compat_lso run SCRIPT         the documented one-command way
    run-keep-native   the same with --keep-native (Keras 3's own class stays)
    install       compat_lso.install(), then the script   the one-line way
    startup-hook  COMPAT_LSO_INSTALL=1 with the .pth line `autoinstall enable` writes
    migrate-<target>  copy the script's folder, run `compat-lso-migrate --target <target>` over
                  the copy (target: shim, keras3, keras2), then run the migrated script natively

Used by the tests in this folder and by `record.py`, which writes the TF 2.15 reference files.

`run_scripts` runs many scripts in one process per mode (run_many.py): a corpus costs one
TensorFlow start per mode, not one per script.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from compat_lso import __main__ as cli

MIGRATION_TARGETS = ("shim", "keras3", "keras2")
MODES = (
    "native",
    "run",
    "run-keep-native",
    "install",
    "startup-hook",
    *(f"migrate-{target}" for target in MIGRATION_TARGETS),
)
# Quiet, CPU only, and the same hash seed every time: the recorder's runs must be repeatable.
BASE_ENVIRONMENT = {
    "TF_CPP_MIN_LOG_LEVEL": "2",
    "CUDA_VISIBLE_DEVICES": "-1",
    "PYTHONHASHSEED": "0",
}
# Settings of the caller that would change what a script does; never passed through.
_CLEARED = ("COMPAT_LSO_INSTALL", "COMPAT_LSO_KEEP_NATIVE")

_INSTALL_THEN_RUN = (
    "import runpy, sys, compat_lso; compat_lso.install(); sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)
_STARTUP_HOOK_THEN_RUN = (
    "import runpy, site, sys; site.addsitedir(sys.argv[1]); "
    "assert 'tensorflow' not in sys.modules, 'the start-up hook imported TensorFlow early'; "
    "sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


class ScriptFailed(AssertionError):
    """The script exited non-zero or reported nothing; the message has its output's tail."""


def run_script(
    script: str | os.PathLike[str],
    mode: str = "native",
    *,
    env: Mapping[str, str] | None = None,
    pythonpath: Sequence[str | os.PathLike[str]] = (),
    timeout: float = 600,
) -> dict[str, Any]:
    """Run `script` in `mode` in a fresh interpreter; return the JSON of its RESULT line.

    The script runs in its own folder, which is on PYTHONPATH (for its helpers), after the
    folders in `pythonpath`. In a migration mode the folder is a migrated copy.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, but got: {mode!r}")
    script = pathlib.Path(script).resolve()
    with tempfile.TemporaryDirectory(prefix="compat-lso-old-code-") as scratch:
        scratch_path = pathlib.Path(scratch)
        environment = _environment(env)
        if mode.startswith("migrate-"):
            script = migrate_copy(script, mode.removeprefix("migrate-"), scratch_path / "copy")
            command = [sys.executable, str(script)]
        elif mode == "native":
            command = [sys.executable, str(script)]
        elif mode in ("run", "run-keep-native"):
            flags = ["--keep-native"] if mode == "run-keep-native" else []
            command = [sys.executable, "-m", "compat_lso", "run", *flags, str(script)]
        elif mode == "install":
            command = [sys.executable, "-c", _INSTALL_THEN_RUN, str(script)]
        else:  # startup-hook
            (scratch_path / cli.PTH_NAME).write_text(cli.PTH_LINE)
            environment["COMPAT_LSO_INSTALL"] = "1"
            command = [sys.executable, "-c", _STARTUP_HOOK_THEN_RUN, scratch, str(script)]
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(
                None,
                [str(script.parent), *map(str, pythonpath), environment.get("PYTHONPATH", "")],
            )
        )
        result = subprocess.run(
            command,
            cwd=script.parent,
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    return parse(result, f"{script.name} ({mode})")


# The modes `run_scripts` serves: the others change how one process starts.
BATCH_MODES = ("native", "run", *(f"migrate-{target}" for target in MIGRATION_TARGETS))
_RUN_MANY = pathlib.Path(__file__).with_name("run_many.py")


def run_scripts(
    scripts: Sequence[str | os.PathLike[str]],
    mode: str,
    *,
    root: str | os.PathLike[str],
    timeout: float = 900,
) -> dict[pathlib.Path, dict[str, Any]]:
    """Run every script in `mode`, all in one fresh interpreter (run_many.py), one after another.

    `root` is the folder that holds the scripts (in subfolders too) and their helpers; it is on
    sys.path for each, and in a migration mode the whole folder is copied and migrated with one
    `compat-lso-migrate` call. Returns {script: {"result": {...}} or {"error": traceback}}.
    """
    if mode not in BATCH_MODES:
        raise ValueError(f"mode must be one of {BATCH_MODES}, but got: {mode!r}")
    root = pathlib.Path(root).resolve()
    originals = [pathlib.Path(script).resolve() for script in scripts]
    with tempfile.TemporaryDirectory(prefix="compat-lso-old-code-") as scratch:
        folder = root
        if mode.startswith("migrate-"):
            folder = _migrate_folder(
                root, mode.removeprefix("migrate-"), pathlib.Path(scratch) / "copy"
            )
        paths = [str(folder / script.relative_to(root)) for script in originals]
        runner = [str(_RUN_MANY), "--path", str(folder), *paths]
        command = (
            [sys.executable, "-m", "compat_lso", "run", *runner]
            if mode == "run"
            else [sys.executable, *runner]
        )
        result = subprocess.run(
            command,
            cwd=folder,
            env=_environment(None),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULTS ")]
    if result.returncode != 0 or not lines:
        raise ScriptFailed(
            f"run_many.py ({mode}) exited {result.returncode}:\n"
            + result.stdout[-1500:]
            + "\n"
            + result.stderr[-4000:]
        )
    reported: dict[str, dict[str, Any]] = json.loads(lines[-1].removeprefix("RESULTS "))
    return {original: reported[path] for original, path in zip(originals, paths, strict=True)}


def _migrate_folder(root: pathlib.Path, target: str, destination: pathlib.Path) -> pathlib.Path:
    shutil.copytree(root, destination, ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run(
        [sys.executable, "-m", "codemods", "--quiet", "--target", target, str(destination)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # 0: nothing to do; 1: migrated or findings reported (what runs is what the test checks).
    if result.returncode not in (0, 1):
        raise ScriptFailed(
            f"compat-lso-migrate --target {target} {root} exited {result.returncode}:\n"
            + result.stdout[-2000:]
            + result.stderr[-2000:]
        )
    return destination


def migrate_copy(script: pathlib.Path, target: str, destination: pathlib.Path) -> pathlib.Path:
    """Copy the script's folder to `destination`, migrate it there; return the migrated script."""
    if target not in MIGRATION_TARGETS:
        raise ValueError(f"target must be one of {MIGRATION_TARGETS}, but got: {target!r}")
    shutil.copytree(script.parent, destination, ignore=shutil.ignore_patterns("__pycache__"))
    migrated = destination / script.name
    result = subprocess.run(
        [sys.executable, "-m", "codemods", "--target", target, str(migrated)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # 0: migrated; 1: findings reported (the script still runs, or the test says why not).
    if result.returncode not in (0, 1):
        raise ScriptFailed(
            f"compat-lso-migrate --target {target} {script.name} exited {result.returncode}:\n"
            + result.stdout[-2000:]
            + result.stderr[-2000:]
        )
    return migrated


def _environment(extra: Mapping[str, str] | None) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    environment.update(BASE_ENVIRONMENT)
    environment.update(extra or {})
    return environment


def parse(result: subprocess.CompletedProcess[str], what: str) -> dict[str, Any]:
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    if result.returncode != 0 or not lines:
        raise ScriptFailed(
            f"{what} exited {result.returncode} "
            f"{'without a RESULT line' if not lines else ''}:\n"
            + result.stdout[-1500:]
            + "\n"
            + result.stderr[-4000:]
        )
    parsed: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT "))
    return parsed
