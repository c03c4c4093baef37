"""Shared test set-up: quiet TensorFlow, and keep the test files that share TensorFlow processes
on one pytest-xdist worker."""

from __future__ import annotations

import os
from typing import Any

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")

# Test files whose old scripts run in shared processes (tests/old_code/shared_runs.py): under
# `--dist loadscope` (noxfile.py) they are one scope, so each process starts once per session,
# on one worker, and not once per worker that runs one of the files.
SHARED_PROCESSES = {
    "tests/old_code/test_run_unmodified.py": "tests/old_code/shared_runs.py",
    "tests/old_code/test_tf24_scripts.py": "tests/old_code/shared_runs.py",
    "tests/old_code/test_gan_project.py": "tests/old_code/shared_runs.py",
}


# Optional: pytest-xdist defines this hook; without xdist (`-p no:xdist`, or not installed) pytest
# would refuse the unknown hook and not start.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    if config.getoption("dist") != "loadscope":
        return None  # xdist's own scheduler for the other modes
    from xdist.scheduler import LoadScopeScheduling

    class SharedProcessScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """loadscope, but SHARED_PROCESSES's files are one scope each group."""

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return SHARED_PROCESSES.get(path) or super()._split_scope(nodeid)

    return SharedProcessScheduling(config, log)
