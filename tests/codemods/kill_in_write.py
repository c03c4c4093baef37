"""Run compat-lso-migrate and SIGKILL it in the middle of writing a file (test_codemod_kill.py).

    python kill_in_write.py TREE KILL_AT MARKER WHO [IN_PLACE] -- CLI-ARGUMENTS...

Every write into a file under TREE, by this process or by its --jobs workers (forked, so they
inherit the hook), is counted across processes (a lock file in TREE's parent). The KILL_AT-th
write puts the first half of its bytes on disk (flushed and fsynced), records in MARKER what it
was writing and in which process, and then sends SIGKILL: to the whole process group (WHO =
`group`, the CLI and its workers alike, as a user's kill -9 or the OOM killer of a container
would) or to the writing process alone (WHO = `worker`, only when that is a --jobs worker). With
`group`, a later-numbered write in another worker waits for that kill, so no file is finished
after the KILL_AT-th write began.

With IN_PLACE = `in-place`, codemods.io.files.atomic_write is replaced by a plain overwrite of the
target, so that the test can prove it catches the torn file such a write leaves behind.

The hook wraps io.open (which builtins.open, os.fdopen and pathlib all go through) and os.write,
so it sees any way the codemod might write; nothing of the codemod itself is patched (except the
deliberate IN_PLACE breakage).
"""

from __future__ import annotations

import builtins
import fcntl
import io
import json
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

TREE, KILL_AT, MARKER, WHO = Path(sys.argv[1]).resolve(), int(sys.argv[2]), sys.argv[3], sys.argv[4]
IN_PLACE = sys.argv[5] == "in-place"
CLI_ARGUMENTS = sys.argv[sys.argv.index("--") + 1 :]
COUNTER = TREE.parent / f"{TREE.name}.writes"
MAIN_PID = os.getpid()
GROUP_KILL_WAIT = 60.0  # seconds; the test's own timeout for the whole run is longer

_open = io.open
_write = os.write


def _in_tree(target: object) -> bool:
    """Whether `target` (a path, or a file descriptor) names a file under TREE."""
    if isinstance(target, int):
        try:
            target = os.readlink(f"/proc/self/fd/{target}")
        except OSError:
            return False
    if not isinstance(target, str | bytes | os.PathLike):
        return False
    path = Path(os.fsdecode(target)).resolve()
    return path.is_relative_to(TREE)


def _count() -> int:
    """This write's number, counted across the CLI and its workers."""
    with _open(COUNTER, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        count = int(handle.read() or 0) + 1
        handle.seek(0)
        handle.truncate()
        handle.write(str(count))
        handle.flush()
        return count


def _write_then_kill(write: Any, data: bytes, where: str, fileno: int, flush: Any) -> Any:
    """Write `data`, unless this is the KILL_AT-th write: then write half of it and die.

    A write numbered after KILL_AT, in another --jobs worker while the KILL_AT-th is still
    fsyncing before the group kill, waits for that kill instead of writing: otherwise how many
    files were finished when the kill landed would depend on how slow the fsync was.
    """
    count = _count()
    if count > KILL_AT and WHO == "group":
        time.sleep(GROUP_KILL_WAIT)
        raise SystemExit(f"kill_in_write: write {count} waited {GROUP_KILL_WAIT} s for the kill")
    if count != KILL_AT:
        return write(data)
    half = len(data) // 2
    write(data[:half])
    flush()
    os.fsync(fileno)
    worker = os.getpid() != MAIN_PID
    with _open(MARKER, "w") as handle:
        json.dump({"file": where, "written": half, "of": len(data), "worker": worker}, handle)
    if WHO == "group":
        os.killpg(0, signal.SIGKILL)
    elif worker:
        os.kill(os.getpid(), signal.SIGKILL)
    raise SystemExit(f"kill_in_write: write {KILL_AT} happened in the CLI process, not a worker")


class _File:
    """A writable file under TREE: passes everything through, but each write() may be the one."""

    def __init__(self, handle: Any, where: str) -> None:
        self._handle, self._where = handle, where

    def write(self, data: bytes) -> Any:
        return _write_then_kill(
            self._handle.write, bytes(data), self._where, self._handle.fileno(), self._handle.flush
        )

    def __enter__(self) -> _File:
        self._handle.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        return self._handle.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def _hooked_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
    handle = _open(file, mode, *args, **kwargs)
    if any(flag in mode for flag in "wax+") and _in_tree(file):
        where = os.readlink(f"/proc/self/fd/{file}") if isinstance(file, int) else os.fspath(file)
        return _File(handle, os.fsdecode(where))
    return handle


def _hooked_write(fd: int, data: bytes) -> int:
    if not _in_tree(fd):
        return _write(fd, data)
    where = os.readlink(f"/proc/self/fd/{fd}")
    return int(
        _write_then_kill(lambda chunk: _write(fd, chunk), bytes(data), where, fd, lambda: None)
    )


io.open = builtins.open = _hooked_open
os.write = _hooked_write  # type: ignore[assignment]

if __name__ == "__main__":
    # The workers must inherit the hook: fork them (the default on Linux before Python 3.14).
    multiprocessing.set_start_method("fork")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from codemods import cli
    from codemods.io import files

    if IN_PLACE:

        def overwrite_in_place(path: Path, data: bytes) -> None:
            with open(path, "wb") as handle:
                handle.write(data)

        files.atomic_write = overwrite_in_place  # type: ignore[assignment]
    sys.exit(cli.main(CLI_ARGUMENTS))
