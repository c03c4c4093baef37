"""The README's main job (examples/run_demo.py) succeeds on this backend, and shows a user only
what they would type and see: the command, paths relative to it, no TensorFlow C++ log."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).parent.parent

# TensorFlow's C++ log lines (`I0000 00:00:1795629667.166547    9540 port.cc:153] oneDNN ...`,
# `2026-11-25 18:24:19.058093: E external/...`) and absl's banner before them; written
# independently of the demo's own filter.
_NATIVE_LOG = re.compile(
    r"^(WARNING: All log messages before absl|[IWEF]\d{4} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d .*\] )"
)


def test_demo_trains_old_and_migrated_code_to_identical_results():
    # The user's shell, not the test session's: without the quieting variables set by nox.
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("TF_CPP_MIN_LOG_LEVEL", "CUDA_VISIBLE_DEVICES")
    }
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "run_demo.py")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "FAIL" not in result.stdout
    assert "ok   trained weights equal" in result.stdout
    # It ends with verify's verdict on the project, migrated in a git repository of its own.
    assert "$ python -m compat_lso verify train.py\n" in result.stdout
    assert (
        "verify: equal: 12 steps equal (1 loss scale optimizer; the program ended before 20 "
        "steps), bit for bit\n" in result.stdout
    )
    assert result.stdout.rstrip().endswith(
        "ok   verify: the migrated project trains as the old one"
    )
    # verify's progress lines (if any: piped, one each 5 s) come before its verdict, and the
    # last one says where the runs ended (issue 38: "before 0/20 after 0/20" after the verdict).
    verdict = result.stdout.index("verify: equal: 12 steps equal")
    progress = re.findall(r"^verify: before \d+/20 .*$", result.stdout, re.M)
    assert "verify: before" not in result.stdout[verdict:], output
    assert not progress or progress[-1].startswith("verify: before 12/20  after 12/20 "), output
    # What a user types, and the paths relative to where they typed it.
    assert "$ compat-lso-migrate --target shim --diff legacy_project\n" in result.stdout
    assert "--- a/legacy_project/train.py\n" in result.stdout
    assert re.search(r"^legacy_project/train\.py:\d+:\d+: LSO001 ", result.stdout, re.M), output
    assert tempfile.gettempdir() not in output
    assert not [line for line in output.splitlines() if _NATIVE_LOG.match(line)], output
    assert result.stderr == ""
