"""Old scripts run unmodified through `python -m compat_lso run` and match their migrated twins.

Each script in scripts/ is written as TF 2.2-2.4 code was; scripts/migrated/ holds the same
program written against the non-experimental API. Both run in fresh processes on the installed
TensorFlow, and every number they report must be identical.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from compat_lso import __main__ as cli

SCRIPTS = pathlib.Path(__file__).parent / "scripts"


def _run(arguments: list[str], extra_env: dict[str, str] | None = None) -> dict:
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
    assert result.returncode == 0, result.stderr[-4000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(lines[-1][len("RESULT ") :])


@pytest.mark.parametrize("script", ["fit_with_policy", "custom_loop", "mirrored_strategy"])
def test_unmodified_script_matches_its_migrated_twin(script):
    old = _run(["-m", "compat_lso", "run", f"{script}.py"])
    new = _run([str(SCRIPTS / "migrated" / f"{script}.py")])
    assert old == new


def test_custom_loop_skips_the_overflow_step_and_halves_the_scale():
    result = _run(["-m", "compat_lso", "run", "custom_loop.py"])
    # 8 steps, growth every 3, overflow in the 6th batch (rows 40-47).
    assert result["scales"] == [1024.0, 1024.0, 2048.0, 2048.0, 2048.0, 1024.0, 1024.0, 1024.0]
    assert result["iterations"] == 8


def test_run_module_form():
    result = _run(["-m", "compat_lso", "run", "-m", "custom_loop"])
    assert result["iterations"] == 8


def test_startup_hook_line_installs_after_tensorflow_import(tmp_path):
    """The exact .pth line `autoinstall enable` writes, honoured when COMPAT_LSO_INSTALL=1."""
    (tmp_path / cli.PTH_NAME).write_text(cli.PTH_LINE)
    bootstrap = (
        "import site, sys, runpy; site.addsitedir(sys.argv[1]); "
        "assert 'tensorflow' not in sys.modules, 'the hook must not import TensorFlow early'; "
        "sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    result = _run(["-c", bootstrap, str(tmp_path), "custom_loop.py"], {"COMPAT_LSO_INSTALL": "1"})
    assert result["iterations"] == 8


def test_startup_hook_line_does_nothing_without_the_variable(tmp_path):
    (tmp_path / cli.PTH_NAME).write_text(cli.PTH_LINE)
    check = (
        "import site, sys; site.addsitedir(sys.argv[1]); import tensorflow as tf; print('RESULT', "
        "'{\"installed\": %s}' % str(hasattr(tf.keras.mixed_precision, 'experimental')).lower())"
    )
    env = {key: value for key, value in os.environ.items() if key != "COMPAT_LSO_INSTALL"}
    result = subprocess.run(
        [sys.executable, "-c", check, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert 'RESULT {"installed": false}' in result.stdout


def test_run_without_a_script_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run"])
    assert exit_info.value.code == 2
    assert "run needs a SCRIPT" in capsys.readouterr().err


def test_run_with_a_missing_script_names_it(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "no_such_script.py"])
    assert "no such script: 'no_such_script.py'" in capsys.readouterr().err
