"""Old scripts run unmodified through `python -m compat_lso run` and match their migrated twins.

Each script in scripts/ is written as TF 2.2-2.4 code was; scripts/migrated/ holds the same
program written against the non-experimental API. Both run in fresh processes on the installed
TensorFlow (harness.py), and every number they report must be identical; so must the numbers of
the script after `compat-lso-migrate --target shim`.
"""

from __future__ import annotations

import functools
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

from compat_lso import __main__ as cli
from tests.old_code import harness

SCRIPTS = pathlib.Path(__file__).parent / "scripts"
# mirrored_strategy first: it splits the CPU into two logical devices, which TensorFlow allows
# only before it initialises them, i.e. before any other script of its batch ran.
EXPERIMENTAL_SCRIPTS = ["mirrored_strategy", "fit_with_policy", "custom_loop"]


# Each mode's scripts run in one process (harness.run_scripts): a TensorFlow start-up per mode.
BATCHES = {
    "run": [f"{script}.py" for script in EXPERIMENTAL_SCRIPTS],
    "native": [f"migrated/{script}.py" for script in EXPERIMENTAL_SCRIPTS],
    "migrate-shim": ["mirrored_strategy.py", "custom_loop.py"],
}


@functools.cache
def _batch(mode: str) -> dict[pathlib.Path, Any]:
    scripts = [SCRIPTS / script for script in BATCHES[mode]]
    return harness.run_scripts(scripts, mode, pythonpath=[SCRIPTS])


def _result(script: str, mode: str) -> dict[str, Any]:
    result = _batch(mode)[(SCRIPTS / script).resolve()]
    if isinstance(result, harness.ScriptFailed):
        raise result
    return result


def _run(arguments: list[str], extra_env: dict[str, str] | None = None) -> dict:
    """A command line of this interpreter, in scripts/, and the RESULT it prints."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SCRIPTS), os.environ.get("PYTHONPATH", "")]),
        **(extra_env or {}),
    }
    result = subprocess.run(
        [sys.executable, *arguments],
        cwd=SCRIPTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return harness.parse(result, " ".join(arguments))


@pytest.mark.parametrize("script", EXPERIMENTAL_SCRIPTS)
def test_unmodified_script_matches_its_migrated_twin(script):
    assert _result(f"{script}.py", "run") == _result(f"migrated/{script}.py", "native")


# fit_with_policy.py is left out: its Policy(..., loss_scale=...) needs manual work, which the
# codemod reports (LSO006) instead of rewriting.
@pytest.mark.parametrize("script", ["custom_loop", "mirrored_strategy"])
def test_script_migrated_by_the_codemod_matches_its_migrated_twin(script):
    assert _result(f"{script}.py", "migrate-shim") == _result(f"migrated/{script}.py", "native")


def test_custom_loop_skips_the_overflow_step_and_halves_the_scale():
    result = _result("custom_loop.py", "run")
    # 8 steps, growth every 3, overflow in the 6th batch (rows 40-47).
    assert result["scales"] == [1024.0, 1024.0, 2048.0, 2048.0, 2048.0, 1024.0, 1024.0, 1024.0]
    assert result["iterations"] == 8


def test_run_module_form():
    result = _run(["-m", "compat_lso", "run", "-m", "custom_loop"])
    assert result["iterations"] == 8


def test_startup_hook_line_installs_after_tensorflow_import():
    """The exact .pth line `autoinstall enable` writes, honoured when COMPAT_LSO_INSTALL=1."""
    result = harness.run_script(SCRIPTS / "custom_loop.py", "startup-hook")
    assert result == _result("custom_loop.py", "run")


# The line compat-lso 0.1.0's `autoinstall enable` wrote (the module has moved since): hook files
# stay in an environment that upgrades, and must keep working.
PTH_LINE_0_1_0 = (
    "import os; os.environ.get('COMPAT_LSO_INSTALL', '').strip().lower() not in "
    "('', '0', 'false', 'no') and __import__('compat_lso._startup', fromlist=['_'])"
    ".install_when_tensorflow_is_imported()\n"
)


@pytest.mark.parametrize(
    ("line", "variable", "installed"),
    [
        pytest.param(cli.PTH_LINE, None, False, id="without-the-variable"),
        pytest.param(PTH_LINE_0_1_0, "1", True, id="0.1.0-hook-file"),
    ],
)
def test_startup_hook_line_in_a_site_directory(tmp_path, line, variable, installed):
    (tmp_path / cli.PTH_NAME).write_text(line)
    check = (
        "import site, sys; site.addsitedir(sys.argv[1]); import tensorflow as tf; print('RESULT', "
        "'{\"installed\": %s}' % str(hasattr(tf.keras.mixed_precision, 'experimental')).lower())"
    )
    env = {key: value for key, value in os.environ.items() if key != "COMPAT_LSO_INSTALL"}
    if variable is not None:
        env["COMPAT_LSO_INSTALL"] = variable
    result = subprocess.run(
        [sys.executable, "-c", check, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert f'RESULT {{"installed": {str(installed).lower()}}}' in result.stdout


def test_run_without_a_script_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run"])
    assert exit_info.value.code == 2
    assert "run needs a SCRIPT" in capsys.readouterr().err


def test_run_with_a_missing_script_names_it(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "no_such_script.py"])
    assert "no such script: 'no_such_script.py'" in capsys.readouterr().err
