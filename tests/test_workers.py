"""The test sessions' pytest-xdist distribution keeps each test module on one worker.

tests/old_code/ caches each mode's batch of old scripts per module (one TensorFlow process per
mode) and tests/distribute/ runs its scenarios in a module fixture: spread over both workers,
every batch runs twice. `--dist loadgroup` did exactly that, silently, on pytest 9.2
(pytest-dev/pytest-xdist#1386), and `make test` took half as long again. This runs the sessions'
own WORKERS options (noxfile.py) over a module of small tests and asks which workers ran them.
"""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("xdist", reason="the test sessions install pytest-xdist; this checks it")

ROOT = pathlib.Path(__file__).parents[1]
_WORKERS = re.search(r"^WORKERS = (\[.*\])$", (ROOT / "noxfile.py").read_text(), re.MULTILINE)
WORKERS: list[str] = ast.literal_eval(_WORKERS[1]) if _WORKERS else []

# Each test appends the worker that ran it; the sleep keeps both workers asking for work.
_MODULE = """
import os, pathlib, time
import pytest

@pytest.mark.parametrize("case", range(12))
def test_case(case):
    time.sleep(0.05)
    with open(pathlib.Path(__file__).with_suffix(".log"), "a") as log:
        log.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""


def test_the_sessions_run_pytest_xdist_on_two_workers():
    assert WORKERS[:2] == ["-n", "2"], "noxfile.py's WORKERS is no longer `-n 2 ...`"


def test_a_modules_tests_run_on_one_worker(tmp_path):
    for name in ("test_first.py", "test_second.py"):
        (tmp_path / name).write_text(_MODULE)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *WORKERS,
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("test_first.log", "test_second.log"):
        workers = (tmp_path / name).read_text().split()
        assert len(workers) == 12, workers
        assert len(set(workers)) == 1, f"{name}'s tests ran on {sorted(set(workers))}"
