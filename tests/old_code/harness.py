"""Run an old-code script in a fresh process, in one of several modes, and read what it reports.

A script reports by printing one line `RESULT {json}` (its last such line counts). Modes:

    native        python SCRIPT                          the installed TensorFlow as it is
    run           python -m compat_lso run SCRIPT         the documented one-command way
    run-keep-native   the same with --keep-native (Keras 3's own class stays)
    install       compat_lso.install(), then the script   the one-line way
    startup-hook  COMPAT_LSO_INSTALL=1 with the .pth line `autoinstall enable` writes
    migrate-<target>  copy the script's folder, run `compat-lso-migrate --target <target>` over
                  the copied script (over the whole copy for a project, PROJECTS) (target:
                  shim, keras3, keras2), then run the migrated script natively

Used by the tests in this folder and by `record.py`, which writes the TF 2.15 reference files.
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
# oneDNN off: its kernels are picked by the CPU's instruction set (AVX-512 or not), which changes
# the order of float32 sums, so the last bits of a weight differ from machine to machine and a
# reference recorded on one machine fails bit for bit on another (seen: TF 2.15's own native run
# on an AVX-512 machine against a reference recorded elsewhere). Eigen's kernels, at these
# scripts' tiny shapes, give the same bits on both.
BASE_ENVIRONMENT = {
    "TF_CPP_MIN_LOG_LEVEL": "2",
    "CUDA_VISIBLE_DEVICES": "-1",
    "PYTHONHASHSEED": "0",
    "TF_ENABLE_ONEDNN_OPTS": "0",
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
        variables = environment(env)
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
            variables["COMPAT_LSO_INSTALL"] = "1"
            command = [sys.executable, "-c", _STARTUP_HOOK_THEN_RUN, scratch, str(script)]
        variables["PYTHONPATH"] = os.pathsep.join(
            filter(
                None,
                [str(script.parent), *map(str, pythonpath), variables.get("PYTHONPATH", "")],
            )
        )
        result = subprocess.run(
            command,
            cwd=script.parent,
            env=variables,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    return parse(result, f"{script.name} ({mode})")


_BATCH = pathlib.Path(__file__).with_name("batch.py")


def run_scripts(
    scripts: Sequence[str | os.PathLike[str]],
    mode: str = "native",
    *,
    env: Mapping[str, str] | None = None,
    pythonpath: Sequence[str | os.PathLike[str]] = (),
    run_options: Sequence[str] = (),
    timeout: float = 900,
) -> dict[pathlib.Path, dict[str, Any] | ScriptFailed]:
    """Run `scripts` in `mode` one after another in ONE fresh interpreter (batch.py).

    `run_options` go to `python -m compat_lso run` in the run modes (`--audit-json FILE`).

    Returns, per script (resolved path), what `run_script` would return, or the ScriptFailed it
    would raise: the traceback of a script that raised, or the process's output when it died
    before the script ended. A TensorFlow start-up per mode instead of per script; the scripts
    that need a process of their own (start-up hooks, command-line forms) use `run_script`.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, but got: {mode!r}")
    paths = [pathlib.Path(script).resolve() for script in scripts]
    with tempfile.TemporaryDirectory(prefix="compat-lso-old-code-") as scratch:
        scratch_path = pathlib.Path(scratch)
        variables = environment(env)
        if mode.startswith("migrate-"):
            paths = _migrate_copies(paths, mode.removeprefix("migrate-"), scratch_path)
        command = {
            "native": [],
            "run": ["-m", "compat_lso", "run", *run_options],
            "run-keep-native": ["-m", "compat_lso", "run", "--keep-native", *run_options],
            "install": ["-c", _INSTALL_THEN_RUN],
        }.get(mode, [])
        if mode == "startup-hook":
            (scratch_path / cli.PTH_NAME).write_text(cli.PTH_LINE)
            variables["COMPAT_LSO_INSTALL"] = "1"
            command = ["-c", _STARTUP_HOOK_THEN_RUN, scratch]
        result = _run_batch(command, paths, variables, pythonpath, scratch, timeout)
    originals = [pathlib.Path(script).resolve() for script in scripts]
    return {
        original: _batch_result(result, index, f"{path.name} ({mode}, batched)")
        for index, (original, path) in enumerate(zip(originals, paths, strict=True))
    }


# The modes whose scripts run as `python SCRIPT` would (no compat_lso start-up of their own):
# several of them can share one process (run_plain_modes).
PLAIN_MODES = ("native", *(f"migrate-{target}" for target in MIGRATION_TARGETS))


def run_plain_modes(
    scripts: Mapping[str, Sequence[str | os.PathLike[str]]],
    *,
    pythonpath: Sequence[str | os.PathLike[str]] = (),
    timeout: float = 900,
) -> dict[str, dict[pathlib.Path, dict[str, Any] | ScriptFailed]]:
    """Run each mode's scripts, for several PLAIN_MODES at once, in ONE fresh interpreter.

    `scripts` maps a mode to its scripts; the result maps each mode to what run_scripts would
    return for it. Each migration copies and migrates its scripts' folders apart from the others
    (its scratch folder's .../<mode>/<n>/copy), so a script and its migrated copies never share
    a module. A TensorFlow start-up for all of them: one process where each mode took one.
    """
    unknown = [mode for mode in scripts if mode not in PLAIN_MODES]
    if unknown:
        raise ValueError(f"modes must be among {PLAIN_MODES}, but got: {unknown}")
    with tempfile.TemporaryDirectory(prefix="compat-lso-old-code-") as scratch:
        scratch_path = pathlib.Path(scratch)
        runs: list[tuple[str, pathlib.Path, pathlib.Path]] = []  # (mode, original, to run)
        for mode, mode_scripts in scripts.items():
            originals = [pathlib.Path(script).resolve() for script in mode_scripts]
            paths = originals
            if mode.startswith("migrate-"):
                folder = scratch_path / mode
                paths = _migrate_copies(originals, mode.removeprefix("migrate-"), folder)
            runs += [
                (mode, original, path) for original, path in zip(originals, paths, strict=True)
            ]
        paths = [path for _, _, path in runs]
        result = _run_batch([], paths, environment(), pythonpath, scratch, timeout)
    outcomes: dict[str, dict[pathlib.Path, dict[str, Any] | ScriptFailed]] = {
        m: {} for m in scripts
    }
    for index, (mode, original, path) in enumerate(runs):
        outcomes[mode][original] = _batch_result(result, index, f"{path.name} ({mode}, batched)")
    return outcomes


def _run_batch(
    command: Sequence[str],
    paths: Sequence[pathlib.Path],
    variables: dict[str, str],
    pythonpath: Sequence[str | os.PathLike[str]],
    scratch: str,
    timeout: float,
) -> subprocess.CompletedProcess[str]:
    """`python COMMAND... batch.py PATH...` in `scratch`, `pythonpath` first on PYTHONPATH."""
    variables["PYTHONPATH"] = os.pathsep.join(
        filter(None, [*map(str, pythonpath), variables.get("PYTHONPATH", "")])
    )
    return subprocess.run(
        [sys.executable, *command, str(_BATCH), *map(str, paths)],
        cwd=scratch,
        env=variables,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _migrate_copies(
    scripts: list[pathlib.Path], target: str, scratch: pathlib.Path
) -> list[pathlib.Path]:
    """Each folder of `scripts` copied once (to .../copy, as migrate_copy) and migrated there:
    the scripts, or the whole folder of a project (PROJECTS)."""
    folders = list(dict.fromkeys(script.parent for script in scripts))
    copies = {folder: scratch / str(index) / "copy" for index, folder in enumerate(folders)}
    for folder, copy in copies.items():
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    migrated = [copies[script.parent] / script.name for script in scripts]
    targets = [
        copies[script.parent] if _is_project(script) else copy
        for script, copy in zip(scripts, migrated, strict=True)
    ]
    _run_codemod(target, list(dict.fromkeys(targets)))
    return migrated


# Projects: each folder of scripts/projects/ holds a program of several modules (a model module
# and a driver), which a user migrates as one repository: its copy is migrated whole.
PROJECTS = pathlib.Path(__file__).resolve().parent / "scripts" / "projects"


def _is_project(script: pathlib.Path) -> bool:
    return script.resolve().parent.parent == PROJECTS


def _batch_result(
    result: subprocess.CompletedProcess[str], index: int, what: str
) -> dict[str, Any] | ScriptFailed:
    start, end = f"SCRIPT-START {index}\n", f"SCRIPT-END {index}\n"
    output = result.stdout
    if start not in output or end not in output.split(start, 1)[1]:
        return ScriptFailed(
            f"{what}: the process exited {result.returncode} before the script ended:\n"
            + output.split(start, 1)[-1][-1500:]
            + "\n"
            + result.stderr[-4000:]
        )
    segment = output.split(start, 1)[1].split(end, 1)[0]
    lines = [line for line in segment.splitlines() if line.startswith("RESULT ")]
    if f"SCRIPT-FAILED {index}" in segment or not lines:
        return ScriptFailed(
            f"{what} failed {'without a RESULT line' if not lines else ''}:\n" + segment[-4000:]
        )
    parsed: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT "))
    return parsed


def migrate_copy(script: pathlib.Path, target: str, destination: pathlib.Path) -> pathlib.Path:
    """Copy the script's folder to `destination`, migrate it there; return the migrated script."""
    shutil.copytree(script.parent, destination, ignore=shutil.ignore_patterns("__pycache__"))
    migrated = destination / script.name
    _run_codemod(target, [destination if _is_project(script) else migrated])
    return migrated


def _run_codemod(target: str, scripts: Sequence[pathlib.Path]) -> None:
    """`compat-lso-migrate --target TARGET SCRIPT...`, in place."""
    if target not in MIGRATION_TARGETS:
        raise ValueError(f"target must be one of {MIGRATION_TARGETS}, but got: {target!r}")
    result = subprocess.run(
        [sys.executable, "-m", "codemods", "--target", target, *map(str, scripts)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # 0: migrated; 1: findings reported (the script still runs, or the test says why not).
    if result.returncode not in (0, 1):
        names = " ".join(script.name for script in scripts)
        raise ScriptFailed(
            f"compat-lso-migrate --target {target} {names} exited {result.returncode}:\n"
            + result.stdout[-2000:]
            + result.stderr[-2000:]
        )


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a script runs with: the caller's, under BASE_ENVIRONMENT, then `extra`."""
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
