"""Migrate a differential program to each target and run it, with its reference, on fork servers.

The reference is the program as written on TF 2.15 (`COMPAT_LSO_TF215_PYTHON`'s interpreter; TF
2.1-2.8 programs through `compat_lso.install()`, their meaning there); `--target keras2`'s output
runs on TF 2.15 too, `keras3`'s and `shim`'s on TF 2.21 (`COMPAT_LSO_TF221_PYTHON`). Each
interpreter is one worker (tests/differential/worker.py) that imports TensorFlow once.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import subprocess
from collections.abc import Iterable
from typing import Any

from codemods.apply.engine import MigrationError, migrate
from tests.differential.generator import Axes, render
from tests.differential.judge import CROSS_RELEASE, first_difference

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGETS = ("keras2", "keras3", "shim")
# The TensorFlow each target's output runs on: "old" is TF 2.15 (the reference's), "new" TF 2.21.
TARGET_TF = {"keras2": "old", "keras3": "new", "shim": "new"}


class Worker:
    """One `python -m tests.differential.worker` process."""

    def __init__(self, python: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
        env.pop("TF_USE_LEGACY_KERAS", None)
        self.process = subprocess.Popen(
            [python, "-m", "tests.differential.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
            text=True,
        )
        self.version = self._read()["ready"]

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the differential worker ended (its TensorFlow did not import?)")
        result: dict[str, Any] = json.loads(line)
        return result

    def run(self, source: str, install: bool = False) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"source": source, "install": install}) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def migrated(source: str, target: str) -> dict[str, Any]:
    """The codemod's output and findings, as data; {"error": ...} where it raised."""
    try:
        result = migrate(source, target)  # type: ignore[arg-type]
    except MigrationError as error:
        return {"error": f"MigrationError: {error}"}
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
    findings = [
        {
            "line": f.line,
            "code": f.code,
            "fixed": f.fixed,
            "note": f.note,
            "message": f.message,
        }
        for f in result.findings
    ]
    return {"text": result.text, "findings": findings}


def run_program(
    axes: Axes,
    workers: dict[str, Worker],
    targets: Iterable[str] = TARGETS,
    reference: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything the judge needs about one program: its source, the reference's trace (run on
    workers["old"] unless given), and per target the migration and its run."""
    source = render(axes)
    record: dict[str, Any] = {"name": axes.name(), "axes": axes.__dict__, "source": source}
    record["targets"] = {target: migrated(source, target) for target in targets}
    # One thread per worker: TF 2.15's runs and TF 2.21's go at once, one process each.
    queues: dict[str, list[tuple[str, str, bool]]] = {tf: [] for tf in workers}
    if reference is None:
        queues["old"].append(("reference", source, axes.era == "experimental"))
    else:
        record["reference"] = reference
    for target, migration in record["targets"].items():
        if "text" in migration and TARGET_TF[target] in workers:
            queues[TARGET_TF[target]].append((target, migration["text"], False))

    def drain(tf: str) -> None:
        for name, text, install in queues[tf]:
            result = workers[tf].run(text, install=install)
            if name == "reference":
                record["reference"] = result
            else:
                record["targets"][name]["run"] = result

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(workers)) as pool:
        for future in [pool.submit(drain, tf) for tf in workers]:
            future.result()
    if "new" in workers and _differs_on_new(record):
        # The control: the program as written on TF 2.21 through compat_lso.install() (TF 2.4's
        # meaning there, as `python -m compat_lso run` gives it), to tell a difference of the
        # TensorFlow release (float16 overflowing in one and not the other) from the migration's.
        record["control"] = workers["new"].run(source, install=True)
    return record


def _differs_on_new(record: dict[str, Any]) -> bool:
    reference = record.get("reference", {}).get("trace")
    for target, migration in record["targets"].items():
        trace = migration.get("run", {}).get("trace")
        if TARGET_TF[target] != "new" or reference is None or trace is None:
            continue
        if first_difference(reference, trace, CROSS_RELEASE) is not None:
            return True
    return False
