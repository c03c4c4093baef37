"""Old scripts run unmodified through `python -m compat_lso run` and match their migrated twins.

Each script in scripts/ is written as TF 2.2-2.4 code was; scripts/migrated/ holds the same
program written against the non-experimental API. Both run in fresh processes on the installed
TensorFlow (shared_runs.py, with test_tf24_scripts.py's scripts), and every number they report
must be identical; so must the numbers of the script after `compat-lso-migrate --target shim`.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat_lso import __main__ as cli
from tests.old_code import shared_runs

SCRIPTS = shared_runs.SCRIPTS
EXPERIMENTAL_SCRIPTS = [script.stem for script in shared_runs.EXPERIMENTAL]


def _result(script: str, mode: str) -> dict[str, Any]:
    return shared_runs.result(SCRIPTS / script, mode)


@pytest.mark.parametrize("script", EXPERIMENTAL_SCRIPTS)
def test_unmodified_script_matches_its_migrated_twin(script):
    assert _result(f"{script}.py", "run") == _result(f"migrated/{script}.py", "native")


# fit_with_policy.py is left out (shared_runs.EXPERIMENTAL_TO_MIGRATE says why).
@pytest.mark.parametrize("script", [s.stem for s in shared_runs.EXPERIMENTAL_TO_MIGRATE])
def test_script_migrated_by_the_codemod_matches_its_migrated_twin(script):
    assert _result(f"{script}.py", "migrate-shim") == _result(f"migrated/{script}.py", "native")


def test_custom_loop_skips_the_overflow_step_and_halves_the_scale():
    result = _result("custom_loop.py", "run")
    # 8 steps, growth every 3, overflow in the 6th batch (rows 40-47).
    assert result["scales"] == [1024.0, 1024.0, 2048.0, 2048.0, 2048.0, 1024.0, 1024.0, 1024.0]
    assert result["iterations"] == 8


def test_startup_hook_line_installs_after_tensorflow_import():
    """The exact .pth line `autoinstall enable` writes, honoured when COMPAT_LSO_INSTALL=1."""
    # The first script of its process: TensorFlow is imported there, after the hook was set.
    assert _result("custom_loop.py", "startup-hook") == _result("custom_loop.py", "run")


def test_run_without_a_script_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run"])
    assert exit_info.value.code == 2
    assert "run needs a SCRIPT" in capsys.readouterr().err


def test_run_with_a_missing_script_names_it(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "no_such_script.py"])
    assert "no such script: 'no_such_script.py'" in capsys.readouterr().err
