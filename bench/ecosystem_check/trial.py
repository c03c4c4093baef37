"""One real-project trial (docs/real-projects.md): a manifest entry with a `driver`, migrated as a
new user would, and proven with `python -m compat_lso verify`.

    python bench/ecosystem_check/trial.py OWNER/NAME[@COMMIT] --target keras3|shim|keras2
        [--mirror DIR] [--before-python PATH] [--steps N] [--keep DIR] [--no-hand]

It extracts the snapshot at the entry's commit (`git archive` from MIRROR/owner+name/repo, the
layout bench/ecosystem.py reads) into a temporary folder, copies the driver (and the drivers'
_trial_stubs.py) to its root, applies the entry's `prep` edits (breaks of today's TensorFlow
outside loss scaling, on both sides), commits that as the old code, runs the codemod on the
entry's `take` paths (the files' paths when there is none), applies the entry's hand edits for
that target (each one line replaced, or followed, by a line written here), and runs `verify` on
the driver: the old code (HEAD) through `compat_lso run --audit` against the migrated working
tree. Nothing of the snapshot is
kept in this repository; --keep DIR leaves the folder for reading. Exit status: verify's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The folder of clones, as bench/ecosystem.py names it (docs/ecosystem.md).
REPOS = "COMPAT_LSO_ECOSYSTEM_REPOS"
PROJECT = HERE.parent.parent
MANIFEST = HERE / "manifest.toml"
DRIVER_NAME = "trial_driver.py"


def entry_for(spec: str) -> dict[str, Any]:
    """The manifest's table for `owner/name[@commit prefix]` that has a driver."""
    name, _, commit = spec.partition("@")
    tables = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["repo"]
    found = [
        t for t in tables if t["name"] == name and t["commit"].startswith(commit) and "driver" in t
    ]
    if len(found) != 1:
        raise SystemExit(f"trial: {len(found)} manifest entries with a driver match {spec!r}")
    entry: dict[str, Any] = found[0]
    return entry


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> int:
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=cwd, env=env, check=False).returncode


def prepare(entry: dict[str, Any], mirror: Path, work: Path) -> None:
    """The snapshot at its commit, with the driver at its root, committed as the old code."""
    gitdir = mirror / entry["name"].replace("/", "+") / "repo"
    archive = subprocess.run(
        ["git", f"--git-dir={gitdir}", "archive", entry["commit"], *entry.get("extract", [])],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
    for edit in entry.get("prep", []):
        hand_edit(work, edit, "prep")
    shutil.copy(PROJECT / entry["driver"], work / DRIVER_NAME)
    shutil.copy(HERE / "drivers" / "_trial_stubs.py", work / "_trial_stubs.py")
    git = ["git", "-c", "user.name=trial", "-c", "user.email=trial@localhost"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "-A", "-f"], cwd=work, check=True)
    subprocess.run(
        [*git, "commit", "-q", "-m", f"{entry['name']}@{entry['commit']}"], cwd=work, check=True
    )


def hand_edit(work: Path, edit: dict[str, Any], kind: str) -> None:
    """One hand edit: line `line` (1-based) replaced by `text` (lines, at its indentation), or,
    with `insert = true`, `text` inserted after it."""
    path = work / edit["path"]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines[edit["line"] - 1]
    indent = at[: len(at) - len(at.lstrip())]
    new = [indent + t + "\n" for t in edit["text"].splitlines()]
    print(f"{kind} edit {edit['path']}:{edit['line']}: {edit['why']}")
    if edit.get("insert"):
        lines[edit["line"] : edit["line"]] = new
    else:
        lines[edit["line"] - 1 : edit["line"]] = new
    path.write_text("".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", help="owner/name[@commit prefix] of a manifest entry with a driver")
    parser.add_argument("--target", required=True, choices=("keras3", "shim", "keras2"))
    parser.add_argument(
        "--mirror",
        type=Path,
        default=Path(os.environ[REPOS]) if REPOS in os.environ else None,
        help=f"the folder of clones bench/ecosystem.py reads (default: ${REPOS})",
    )
    parser.add_argument("--before-python", help="verify's --before-python (the old TensorFlow)")
    parser.add_argument("--steps", type=int, help="verify's --steps (default: the entry's, or 6)")
    parser.add_argument("--rtol", default=None, help="verify's --rtol")
    parser.add_argument("--keep", type=Path, help="extract here and leave it (an empty folder)")
    parser.add_argument("--no-hand", action="store_true", help="skip the entry's hand edits")
    args = parser.parse_args(argv)
    if args.mirror is None or not args.mirror.is_dir():
        parser.error(f"--mirror DIR (or ${REPOS}) must name the folder of clones: {args.mirror}")
    entry = entry_for(args.repo)
    work = args.keep or Path(tempfile.mkdtemp(prefix="trial-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(PROJECT), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    try:
        prepare(entry, args.mirror, work)
        take = entry.get("take") or [f["path"] for f in entry["files"]]
        _run([sys.executable, "-m", "codemods", "--target", args.target, *take], work, env)
        edits = [e for e in entry.get("hand", []) if e["target"] == args.target]
        if edits and not args.no_hand:
            for edit in edits:
                hand_edit(work, edit, "hand")
            # As a user who followed the help: the codemod again, on the edited files.
            _run([sys.executable, "-m", "codemods", "--target", args.target, *take], work, env)
        steps = args.steps or entry.get("steps", 6)
        cmd = [sys.executable, "-m", "compat_lso", "verify", "--steps", str(steps)]
        if args.before_python:
            cmd += ["--before-python", args.before_python]
        if args.rtol:
            cmd += ["--rtol", args.rtol]
        return _run([*cmd, "--", DRIVER_NAME], work, env)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
