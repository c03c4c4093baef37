"""`python -m compat_lso check-config` reaches the config comparison CLI with its exit codes."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

CONFIGS = pathlib.Path(__file__).parent / "fixtures" / "configs"


def _check(a: pathlib.Path, b: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compat_lso", "check-config", str(a), str(b)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_equivalent_configs_from_two_generations_exit_0():
    result = _check(CONFIGS / "tf23_dynamic.json", CONFIGS / "keras3.json")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_different_scale_exits_1_with_the_path_that_differs(tmp_path):
    changed = json.loads((CONFIGS / "keras3.json").read_text())
    changed["initial_scale"] = 128.0
    (tmp_path / "changed.json").write_text(json.dumps(changed))
    result = _check(CONFIGS / "keras3.json", tmp_path / "changed.json")
    assert result.returncode == 1
    assert "initial_scale: 64 != 128" in result.stdout


def test_a_missing_file_exits_2_naming_it(tmp_path):
    result = _check(CONFIGS / "keras3.json", tmp_path / "absent.json")
    assert result.returncode == 2
    assert "absent.json" in result.stderr
