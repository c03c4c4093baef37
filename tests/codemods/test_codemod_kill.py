"""A run killed mid-way (SIGKILL, so no cleanup runs) leaves every file either as it was or fully
migrated, and nothing a user or a later run would mistake for their code.

The tree is a few hundred copies of a real old-API script. The CLI runs in a subprocess; once it
has written some files (polled), it is SIGKILLed, at several moments. Then each file must be
byte-identical to the original or to the migration computed in-process by the engine. The atomic
write (temporary file beside the target, fsync, os.replace) can leave only its temporary file
behind, when the kill falls between creating it and the replace: such a file is hidden, named
`.compat-lso-tmp.<name>.<random>.tmp`, and ignored by discovery, which the test checks by running
the CLI again over the tree and requiring every file to end up migrated.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codemods.engine import migrate
from codemods.files import TEMPORARY_PREFIX, discover

ROOT = Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "tests" / "codemods" / "fixtures" / "train_script.before.py").read_bytes()
COPIES = 300
HARD_TIMEOUT = 60.0  # seconds for one kill round, whatever happens

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")


def _tree(root: Path) -> list[Path]:
    paths = []
    for index in range(COPIES):
        directory = root / f"pkg{index % 10}"
        directory.mkdir(exist_ok=True)
        path = directory / f"train_{index}.py"
        path.write_bytes(SOURCE)
        paths.append(path)
    return paths


def _kill_after(
    root: Path, paths: list[Path], migrated: bytes, changed_at_least: int, jobs: int
) -> int:
    """Start the CLI, SIGKILL it once `changed_at_least` files changed; return how many changed."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "codemods", "--target", "shim", "--jobs", str(jobs), str(root)],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its workers too: the kill hits the whole group
    )
    deadline = time.monotonic() + HARD_TIMEOUT
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if sum(1 for p in paths if p.read_bytes() != SOURCE) >= changed_at_least:
                break
            time.sleep(0.005)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=HARD_TIMEOUT)
    assert time.monotonic() < deadline, "the CLI neither wrote the files nor finished in time"
    return sum(1 for p in paths if p.read_bytes() == migrated)


@pytest.mark.parametrize(
    ("changed_at_least", "jobs"), [(1, 1), (COPIES // 3, 1), (COPIES // 2, 2), (COPIES - 20, 2)]
)
def test_sigkill_leaves_every_file_original_or_fully_migrated(tmp_path, changed_at_least, jobs):
    paths = _tree(tmp_path)
    migrated = migrate(SOURCE.decode("utf-8"), "shim").text.encode("utf-8")
    assert migrated != SOURCE

    done = _kill_after(tmp_path, paths, migrated, changed_at_least, jobs)

    print(f"SIGKILL after {done} of {COPIES} files were migrated (jobs={jobs})")
    states = {p: p.read_bytes() for p in paths}
    torn = [p for p, data in states.items() if data not in (SOURCE, migrated)]
    assert not torn, f"half-written files: {torn[:5]}"
    assert done >= min(changed_at_least, COPIES) or done == COPIES
    # Nothing else appeared, except perhaps the clearly named temporary files of an interrupted
    # write.
    extra = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p not in states)
    assert all(p.name.startswith(TEMPORARY_PREFIX) and p.name.endswith(".tmp") for p in extra), (
        extra
    )
    # A later run ignores them and finishes the job.
    assert not [p for p in discover([str(tmp_path)]) if p.name.startswith(TEMPORARY_PREFIX)]
    completed = subprocess.run(
        [sys.executable, "-m", "codemods", "--target", "shim", "--jobs", "1", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=HARD_TIMEOUT,
        check=False,
    )
    assert completed.returncode in (0, 1), completed.stderr
    assert all(p.read_bytes() == migrated for p in paths)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        pytest.skip("needs /proc/PID/task/PID/children (Linux) to find the worker processes")
    return [int(child) for child in text.split()]


def test_a_killed_worker_is_reported_and_no_file_is_torn(tmp_path):
    # The OOM killer picks a --jobs worker, not the CLI: the CLI must say so and exit with 2, with
    # every file as it was or fully migrated, instead of ending in a BrokenProcessPool traceback.
    paths = _tree(tmp_path)
    migrated = migrate(SOURCE.decode("utf-8"), "shim").text.encode("utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "codemods", "--target", "shim", "--jobs", "2", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + HARD_TIMEOUT
    killed = None
    while killed is None and time.monotonic() < deadline and process.poll() is None:
        workers = _children(process.pid)
        if workers and any(p.read_bytes() != SOURCE for p in paths):
            killed = workers[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.002)
    stdout, stderr = process.communicate(timeout=HARD_TIMEOUT)
    if killed is None:
        pytest.skip("the run finished before a worker could be killed")

    assert process.returncode == 2, (stdout, stderr)
    assert "a --jobs worker process died" in stderr and "--jobs 1" in stderr, stderr
    assert "Traceback" not in stderr, stderr
    torn = [p for p in paths if p.read_bytes() not in (SOURCE, migrated)]
    assert not torn, f"half-written files: {torn[:5]}"
