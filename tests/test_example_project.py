"""The README's main job (examples/run_demo.py) succeeds on this backend."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).parent.parent


def test_demo_trains_old_and_migrated_code_to_identical_results():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "run_demo.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    assert "ok   trained weights equal" in result.stdout
