"""A run killed mid-way (SIGKILL, so no cleanup runs) leaves every file either as it was or fully
migrated, and nothing a user or a later run would mistake for their code.

The tree is a few hundred copies of a real old-API script. The CLI runs in a subprocess under
`kill_in_write.py`, which counts every write into the tree (across --jobs workers) and, at the
chosen write, puts half of its bytes on disk and then SIGKILLs the run: the kill lands inside a
write, the one moment an in-place overwrite would leave a torn file. Then each file must be
byte-identical to the original or to the migration computed in-process by the engine. The atomic
write (temporary file beside the target, fsync, os.replace) can leave only its temporary file
behind: such a file is hidden, named `.compat-lso-tmp.<name>.<random>.tmp`, and ignored by
discovery, which the test checks by running the CLI again over the tree and requiring every file
to end up migrated.

`test_the_check_catches_a_torn_write` proves the check can fail: with atomic_write replaced by an
in-place overwrite (in the child process only), the same kill must leave a torn file, and the
check must find it. Every precondition (the kill landed, inside a write, in the process meant)
fails the test loudly when it is not met; nothing here is skipped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from codemods.apply.engine import migrate
from codemods.io.files import TEMPORARY_PREFIX, discover

ROOT = Path(__file__).resolve().parents[2]
KILLER = Path(__file__).with_name("kill_in_write.py")
SOURCE = (ROOT / "tests" / "codemods" / "fixtures" / "train_script.before.py").read_bytes()
MIGRATED = migrate(SOURCE.decode("utf-8"), "shim").text.encode("utf-8")
COPIES = 300
HARD_TIMEOUT = 120.0  # seconds for one CLI run, whatever happens

if not hasattr(signal, "SIGKILL") or not Path("/proc/self/fd").is_dir():
    pytest.fail(
        "these tests need SIGKILL and /proc/self/fd (Linux); the codemod's guarantee is tested "
        "there",
        pytrace=False,
    )


def _environment() -> dict[str, str]:
    """The test's environment, with the repository put first on PYTHONPATH (not replacing it)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _tree(root: Path) -> list[Path]:
    root.mkdir()
    paths = []
    for index in range(COPIES):
        directory = root / f"pkg{index % 10}"
        directory.mkdir(exist_ok=True)
        path = directory / f"train_{index}.py"
        path.write_bytes(SOURCE)
        paths.append(path)
    return paths


@dataclass
class Killed:
    returncode: int
    stderr: str
    marker: dict  # what kill_in_write.py was writing when it struck

    def __str__(self) -> str:
        return f"exit {self.returncode}, marker {self.marker}, stderr:\n{self.stderr}"


def _run_and_kill(tree: Path, kill_at: int, who: str, jobs: int, in_place: bool = False) -> Killed:
    marker = tree.parent / "marker.json"
    command = [sys.executable, str(KILLER), str(tree), str(kill_at), str(marker), who]
    command += ["in-place" if in_place else "atomic", "--"]
    command += ["--target", "shim", "--jobs", str(jobs), str(tree)]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the kill hits the CLI and its workers
    )
    try:
        _, stderr = process.communicate(timeout=HARD_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        pytest.fail(f"the CLI neither reached write {kill_at} nor finished in time:\n{stderr}")
    if not marker.exists():
        pytest.fail(
            f"precondition failed: the CLI ended (exit {process.returncode}) without reaching "
            f"write {kill_at} of {COPIES}, so no kill landed; stderr:\n{stderr}"
        )
    return Killed(process.returncode, stderr, json.loads(marker.read_text()))


def _states(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """(migrated, torn): torn files are neither the original nor the full migration."""
    states = {p: p.read_bytes() for p in paths}
    return (
        [p for p, data in states.items() if data == MIGRATED],
        [p for p, data in states.items() if data not in (SOURCE, MIGRATED)],
    )


@pytest.mark.parametrize(
    ("kill_at", "jobs"), [(1, 1), (COPIES // 3, 1), (COPIES // 2, 2), (COPIES - 20, 2)]
)
def test_sigkill_inside_a_write_leaves_every_file_original_or_fully_migrated(
    tmp_path, kill_at, jobs
):
    tree = tmp_path / "tree"
    paths = _tree(tree)
    assert MIGRATED != SOURCE

    killed = _run_and_kill(tree, kill_at, "group", jobs)

    # The kill landed, inside a write of the migrated bytes, while files were still to do.
    assert killed.returncode == -signal.SIGKILL, killed
    assert killed.marker["of"] == len(MIGRATED) and killed.marker["written"] > 0, killed
    migrated, torn = _states(paths)
    assert not torn, f"half-written files: {torn[:5]} ({killed})"
    # Writes numbered before the fatal one are complete, except that each other worker may be
    # in the middle of one (counted, not yet replaced); later-numbered ones wait for the kill.
    assert kill_at - jobs <= len(migrated) <= kill_at - 1, (len(migrated), killed)
    # The half-written data went to the atomic write's temporary file, which is all that is left
    # besides the tree.
    partial = Path(killed.marker["file"])
    assert partial.name.startswith(TEMPORARY_PREFIX) and partial.name.endswith(".tmp"), killed
    assert partial.read_bytes() == MIGRATED[: killed.marker["written"]]
    extra = sorted(p for p in tree.rglob("*") if p.is_file() and p not in set(paths))
    assert partial in extra, extra
    assert all(p.name.startswith(TEMPORARY_PREFIX) and p.name.endswith(".tmp") for p in extra)

    # A later run ignores the temporary files and finishes the job.
    assert not [p for p in discover([str(tree)]) if p.name.startswith(TEMPORARY_PREFIX)]
    completed = subprocess.run(
        [sys.executable, "-m", "codemods", "--target", "shim", "--jobs", "1", str(tree)],
        cwd=ROOT,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=HARD_TIMEOUT,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr  # 1: files were rewritten
    assert f"rewrote {COPIES - len(migrated)} file(s)" in completed.stderr, completed.stderr
    assert all(p.read_bytes() == MIGRATED for p in paths)


def test_the_check_catches_a_torn_write(tmp_path):
    # The same kill with atomic_write replaced by an in-place overwrite, in the child only: the
    # file being written is left torn, and the check above must see it.
    tree = tmp_path / "tree"
    paths = _tree(tree)
    killed = _run_and_kill(tree, COPIES // 2, "group", jobs=1, in_place=True)
    assert killed.returncode == -signal.SIGKILL, killed
    migrated, torn = _states(paths)
    assert torn == [Path(killed.marker["file"])], killed
    assert torn[0].read_bytes() == MIGRATED[: killed.marker["written"]]
    assert len(migrated) == COPIES // 2 - 1


def test_a_killed_worker_is_reported_and_no_file_is_torn(tmp_path):
    # The OOM killer picks a --jobs worker, not the CLI: the CLI must say so and exit with 2, with
    # every file as it was or fully migrated, instead of ending in a BrokenProcessPool traceback.
    tree = tmp_path / "tree"
    paths = _tree(tree)
    killed = _run_and_kill(tree, COPIES // 2, "worker", jobs=2)

    assert killed.marker["worker"] is True, f"the write was not in a worker: {killed}"
    assert killed.returncode == 2, killed
    assert "a --jobs worker process died" in killed.stderr, killed
    assert "--jobs 1" in killed.stderr, killed
    assert "Traceback" not in killed.stderr, killed
    _, torn = _states(paths)
    assert not torn, f"half-written files: {torn[:5]} ({killed})"
