"""Record reference numbers: run old-code scripts and write what they report as one JSON file.

    python -m tests.old_code.record --output FILE [--mode MODE] [--repeat N]
        [--command TEXT] [--root DIR] SCRIPT_OR_FOLDER...

Each script runs in a fresh process (`harness.run_script`, default mode `native`: no compat_lso)
`--repeat` times (default 2); the run stops with an error unless every repetition reports the
same numbers, so a reference is only written by a deterministic script. A folder stands for the
`*.py` files in it that call `report(...)` at top level (helpers such as common.py, which only
define it, are skipped). The file written:

    {"command": how to remake it, "recorder": the exact recorder command line, "mode": ...,
     "versions": {python, tensorflow, keras, tf_keras, platform}, "environment": {...},
     "results": {"<path relative to --root>": {...what the script reported...}}}

`nox -s "record(tf215)"` writes the committed TF 2.15 references (the TF 2.4-2.15 scripts in
tests/old_code/scripts/tf24/); pass other scripts and `--output` after `--` to record more.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import pathlib
import platform
import re
import shlex
import sys
from typing import Any

from tests.old_code import harness

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
_TOP_LEVEL_REPORT = re.compile(r"^report\(", re.MULTILINE)
# Environment variables that change what TensorFlow computes or which Keras it uses.
_RECORDED_ENVIRONMENT = ("TF_USE_LEGACY_KERAS", "TF_ENABLE_ONEDNN_OPTS", "TF_DETERMINISTIC_OPS")


def scripts_in(paths: list[str]) -> list[pathlib.Path]:
    found: list[pathlib.Path] = []
    for name in paths:
        path = pathlib.Path(name)
        if path.is_dir():
            found.extend(
                p
                for p in sorted(path.glob("*.py"))
                if _TOP_LEVEL_REPORT.search(p.read_text(encoding="utf-8"))
            )
        elif path.is_file():
            found.append(path)
        else:
            raise SystemExit(f"record: no such script or folder: {name!r}")
    return found


def record(
    scripts: list[pathlib.Path], mode: str, repeat: int, root: pathlib.Path
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for script in scripts:
        key = script.resolve().relative_to(root.resolve()).as_posix()
        print(f"record: {key} ({mode}, {repeat}x)", file=sys.stderr, flush=True)
        runs = [harness.run_script(script, mode) for _ in range(repeat)]
        if any(run != runs[0] for run in runs[1:]):
            raise SystemExit(
                f"record: {key} reported different numbers in repeated runs; a reference must "
                "be deterministic"
            )
        results[key] = runs[0]
    return results


def versions() -> dict[str, str | None]:
    def version(distribution: str) -> str | None:
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {
        "python": platform.python_version(),
        "tensorflow": version("tensorflow"),
        "keras": version("keras"),
        "tf_keras": version("tf-keras"),
        "platform": f"{platform.system()} {platform.machine()}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.old_code.record", description=__doc__.split("\n")[0]
    )
    parser.add_argument("paths", nargs="+", metavar="SCRIPT_OR_FOLDER")
    parser.add_argument("--output", required=True, help="the JSON file to write")
    parser.add_argument("--mode", default="native", choices=harness.MODES)
    parser.add_argument("--repeat", type=int, default=2, help="runs per script (default 2)")
    parser.add_argument(
        "--command", help="how to remake the file, recorded in it (default: this command line)"
    )
    parser.add_argument(
        "--root",
        default=str(REPOSITORY / "tests"),
        help="result keys are script paths relative to this (default: tests/)",
    )
    arguments = parser.parse_args(argv)
    if arguments.repeat < 1:
        parser.error("--repeat must be at least 1")

    recorder = shlex.join(["python", "-m", "tests.old_code.record", *(argv or sys.argv[1:])])
    # What the scripts ran with: the caller's environment under the harness's fixed settings.
    effective = harness.environment()
    reference = {
        "command": arguments.command or recorder,
        "recorder": recorder,
        "mode": arguments.mode,
        "versions": versions(),
        "environment": {name: effective.get(name) for name in _RECORDED_ENVIRONMENT},
        "results": record(
            scripts_in(arguments.paths),
            arguments.mode,
            arguments.repeat,
            pathlib.Path(arguments.root),
        ),
    }
    output = pathlib.Path(arguments.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(reference, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"record: wrote {output} ({len(reference['results'])} scripts)", file=sys.stderr)
    return 0


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A reference file's `results`: {script path relative to tests/: reported numbers}."""
    reference: dict[str, Any] = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    results: dict[str, Any] = reference["results"]
    return results


if __name__ == "__main__":
    sys.exit(main())
