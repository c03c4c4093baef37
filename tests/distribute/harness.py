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


class _Process:
    def __init__(self, argv: list[str], env: dict[str, str], tmp: str, index: int) -> None:
        self.argv = argv
        # Open for the process's whole life; outputs() closes them.
        self.stdout = open(os.path.join(tmp, f"{index}.out"), "w+")  # noqa: SIM115
        self.stderr = open(os.path.join(tmp, f"{index}.err"), "w+")  # noqa: SIM115
        self.popen = subprocess.Popen(
            argv, stdout=self.stdout, stderr=self.stderr, env=env, text=True
        )

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait()

    def outputs(self) -> tuple[str, str]:
        self.stdout.seek(0)
        self.stderr.seek(0)
        out, err = self.stdout.read(), self.stderr.read()
        self.stdout.close()
        self.stderr.close()
        return out, err


def _run_groups(
    groups: list[list[tuple[list[str], dict[str, str]]]], timeout_s: float
) -> list[list[dict] | ScenarioFailed]:
    """Start every command of every group at once. A group's processes (e.g. the workers of one
    cluster) live and die together: when one fails or the deadline passes, the rest of its group
    is killed. Returns, per group, each process's RESULT, or the failure with everyone's stderr."""
    with tempfile.TemporaryDirectory(prefix="compat_lso_distribute_") as tmp:
        started = [
            [_Process(argv, env, tmp, f"{g}_{i}") for i, (argv, env) in enumerate(group)]  # type: ignore[arg-type]
            for g, group in enumerate(groups)
        ]
        failures: list[str | None] = [None] * len(groups)
        deadline = time.monotonic() + timeout_s
        try:
            while True:
                running = False
                for g, processes in enumerate(started):
                    if failures[g] is not None:
                        continue
                    codes = [p.popen.poll() for p in processes]
                    failed = [i for i, code in enumerate(codes) if code not in (None, 0)]
                    if failed:
                        failures[g] = f"process {failed[0]} exited with {codes[failed[0]]}"
                    elif time.monotonic() > deadline and None in codes:
                        failures[g] = f"timed out after {timeout_s} s"
                    if failures[g] is not None:
                        for process in processes:
                            process.kill()
                    elif None in codes:
                        running = True
                if not running:
                    break
                time.sleep(POLL_S)
        finally:
            for processes in started:
                for process in processes:
                    process.kill()
        results: list[list[dict] | ScenarioFailed] = []
        for g, processes in enumerate(started):
            reports, logs = [], []
            failure = failures[g]
            for index, process in enumerate(processes):
                out, err = process.outputs()
                code = process.popen.returncode
                logs.append(
                    f"--- process {index}: {' '.join(process.argv[1:])} (exit {code})\n"
                    f"{err[-STDERR_TAIL:]}"
                )
                lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
                if code != 0 or not lines:
                    failure = failure or f"process {index} exited with {code} and no RESULT line"
                else:
                    reports.append(json.loads(lines[-1][len("RESULT ") :]))
            results.append(ScenarioFailed(failure + "\n" + "\n".join(logs)) if failure else reports)
        return results


def _commands(strategy: str, runs: list[str]) -> list[tuple[list[str], dict[str, str]]]:
    argv = [sys.executable, str(SCRIPT), strategy, *runs]
    if strategy != "multiworker":
        return [(argv, _environment())]
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(WORKERS)]}
    return [
        (
            argv,
            _environment(
                {
                    "TF_CONFIG": json.dumps(
                        {"cluster": cluster, "task": {"type": "worker", "index": index}}
                    )
                }
            ),
        )
        for index in range(WORKERS)
    ]


def run(strategy: str, runs: list[str], timeout_s: float = TIMEOUT_S) -> list[dict]:
    """The RESULT of each process: one for `single`/`mirrored`, one per worker for `multiworker`."""
    (result,) = _run_groups([_commands(strategy, runs)], timeout_s)
    if isinstance(result, ScenarioFailed):
        raise result
    return result


def run_commands(
    commands: list[list[str]], timeout_s: float = TIMEOUT_S
) -> list[list[dict] | ScenarioFailed]:
    """Other scripts (argv lists), each in a fresh process of its own, all at once: per command,
    what it printed on its RESULT line, or its failure with its stderr."""
    return _run_groups([[(argv, _environment())] for argv in commands], timeout_s)


def run_all(
    runs_by_strategy: dict[str, list[str]], timeout_s: float = TIMEOUT_S
) -> dict[str, list[dict] | ScenarioFailed]:
    """`run` for several strategies, all processes at once; a failed strategy gives its failure."""
    strategies = list(runs_by_strategy)
    results = _run_groups(
        [_commands(strategy, runs_by_strategy[strategy]) for strategy in strategies], timeout_s
    )
    for index, (strategy, result) in enumerate(zip(strategies, results, strict=True)):
        if isinstance(result, ScenarioFailed) and _lost_port_race(result):
            # Another process took a port between free_ports() closing it and TF binding it.
            (results[index],) = _run_groups(
                [_commands(strategy, runs_by_strategy[strategy])], timeout_s
            )
    return dict(zip(strategies, results, strict=True))


def _lost_port_race(failure: ScenarioFailed) -> bool:
    text = str(failure).lower()
    return "address already in use" in text or "could not start grpc server" in text
