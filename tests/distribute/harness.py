"""Runs `scripts/scenario.py` in fresh processes: one for `single` and `mirrored`, two worker
processes on loopback for `multiworker`, and returns what each printed on its `RESULT` line.

Every process has a hard deadline; on a timeout or a failure every process still running is
killed and the test fails with each one's stderr, so a hang in a collective never blocks CI.
"""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "scenario.py"
TIMEOUT_S = 300
WORKERS = 2
POLL_S = 0.2
STDERR_TAIL = 4000


class ScenarioFailed(AssertionError):
    pass


def free_ports(count: int) -> list[int]:
    """Ports free right now on 127.0.0.1: bound to port 0, read, closed."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["CUDA_VISIBLE_DEVICES"] = "-1"
    env.update(extra or {})
    return env


def _run_processes(commands: list[tuple[list[str], dict[str, str]]], timeout_s: float) -> list[dict]:
    """Start every command at once; wait for all, killing all on the first failure or the deadline."""
    with tempfile.TemporaryDirectory(prefix="compat_lso_distribute_") as tmp:
        processes = []
        for index, (argv, env) in enumerate(commands):
            stdout = open(os.path.join(tmp, f"{index}.out"), "w+")
            stderr = open(os.path.join(tmp, f"{index}.err"), "w+")
            process = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env=env, text=True)
            processes.append((process, stdout, stderr))
        deadline = time.monotonic() + timeout_s
        failure = None
        try:
            while any(p.poll() is None for p, _, _ in processes):
                failed = [i for i, (p, _, _) in enumerate(processes) if p.returncode not in (None, 0)]
                if failed:
                    failure = f"process {failed[0]} exited with {processes[failed[0]][0].returncode}"
                    break
                if time.monotonic() > deadline:
                    failure = f"timed out after {timeout_s} s"
                    break
                time.sleep(POLL_S)
        finally:
            for process, _, _ in processes:
                if process.poll() is None:
                    process.kill()
                process.wait()
        reports, logs = [], []
        for index, (process, stdout, stderr) in enumerate(processes):
            stdout.seek(0)
            stderr.seek(0)
            out, err = stdout.read(), stderr.read()
            stdout.close()
            stderr.close()
            logs.append(f"--- process {index}: {' '.join(commands[index][0][1:])} (exit {process.returncode})\n{err[-STDERR_TAIL:]}")
            lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
            if process.returncode != 0 or not lines:
                failure = failure or f"process {index} exited with {process.returncode}"
            else:
                reports.append(json.loads(lines[-1][len("RESULT ") :]))
        if failure:
            raise ScenarioFailed(failure + "\n" + "\n".join(logs))
        return reports


def _commands(strategy: str, runs: list[str]) -> list[tuple[list[str], dict[str, str]]]:
    argv = [sys.executable, str(SCRIPT), strategy, *runs]
    if strategy != "multiworker":
        return [(argv, _environment())]
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(WORKERS)]}
    return [
        (argv, _environment({"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})}))
        for index in range(WORKERS)
    ]


def run(strategy: str, runs: list[str], timeout_s: float = TIMEOUT_S) -> list[dict]:
    """The RESULT of each process: one for `single`/`mirrored`, one per worker for `multiworker`."""
    return _run_processes(_commands(strategy, runs), timeout_s)


def run_all(runs_by_strategy: dict[str, list[str]], timeout_s: float = TIMEOUT_S) -> dict[str, list[dict]]:
    """`run` for several strategies, all processes at once (and all killed if one fails)."""
    commands, owners = [], []
    for strategy, runs in runs_by_strategy.items():
        if runs:
            for command in _commands(strategy, runs):
                commands.append(command)
                owners.append(strategy)
    reports = _run_processes(commands, timeout_s)
    results: dict[str, list[dict]] = {strategy: [] for strategy in runs_by_strategy}
    for owner, report in zip(owners, reports):
        results[owner].append(report)
    return results
