"""Where a manifest repository lives in the folder of clones, and its files at the pinned commit.

The folder (`--repos DIR` or COMPAT_LSO_ECOSYSTEM_REPOS) holds one git repository per manifest
repository, under any of these names, tried in this order:

    DIR/owner+name/repo/   a snapshot: a bare repository, or a clone, in a folder named `repo`
    DIR/owner+name/        a bare repository or a clone
    DIR/owner__name/       the same, with the corpus's separator
    DIR/owner/name/        a clone: `git clone https://github.com/owner/name DIR/owner/name`

Any of them needs the pinned commit in its history (a full clone has it; a shallow one may not).
Files are read with `git cat-file` at the commit, never from a work tree, so a clone checked out
at another commit is fine, and each file's blob id is compared with the manifest's.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ecosystem_check.manifest import Entry


@dataclass
class Snapshot:
    """What the folder gave for one manifest entry."""

    entry: Entry
    where: Path | None  # the repository found, None where none is
    problem: str | None = None  # why the entry could not be taken at all
    files: list[str] = field(default_factory=list)  # paths written, relative to the copy's root
    issues: list[str] = field(default_factory=list)  # files not taken, one line each

    @property
    def present(self) -> bool:
        return self.problem is None


def candidates(folder: Path, name: str) -> list[Path]:
    owner, repo = name.split("/", 1)
    return [
        folder / f"{owner}+{repo}" / "repo",
        folder / f"{owner}+{repo}",
        folder / f"{owner}__{repo}",
        folder / owner / repo,
    ]


def locate(folder: Path, name: str) -> Path | None:
    """The first candidate that is a git repository of its own (never a parent's)."""
    for path in candidates(folder, name):
        if path.is_dir() and _git(path, "rev-parse", "--git-dir").returncode == 0:
            return path
    return None


def _git(where: Path, *arguments: str, data: bool = False) -> subprocess.CompletedProcess[bytes]:
    # The ceiling stops git from taking a parent folder's repository for this one.
    environment = {**os.environ, "GIT_CEILING_DIRECTORIES": str(where.resolve().parent)}
    return subprocess.run(
        ["git", "-C", str(where), *arguments],
        capture_output=True,
        env=environment,
        check=False,
    )


def take(folder: Path, entry: Entry, destination: Path) -> Snapshot:
    """Write the entry's files at its commit under `destination` (created); never raises for a
    repository or file that is not there: that is the snapshot's problem or issues."""
    where = locate(folder, entry.name)
    if where is None:
        tried = ", ".join(str(p.relative_to(folder)) for p in candidates(folder, entry.name))
        return Snapshot(entry, None, f"not in the folder (looked for {tried})")
    if _git(where, "cat-file", "-e", f"{entry.commit}^{{commit}}").returncode != 0:
        return Snapshot(entry, where, f"commit {entry.commit} is not in {where}")
    snapshot = Snapshot(entry, where)
    for path, blob in entry.files:
        found = _git(where, "rev-parse", f"{entry.commit}:{path}")
        if found.returncode != 0:
            snapshot.issues.append(f"{path}: not at commit {entry.commit[:10]}")
            continue
        if found.stdout.decode().strip() != blob:
            snapshot.issues.append(
                f"{path}: blob {found.stdout.decode().strip()[:10]} at the commit, the manifest "
                f"says {blob[:10]}"
            )
            continue
        content = _git(where, "cat-file", "blob", blob)
        if content.returncode != 0:
            snapshot.issues.append(f"{path}: blob {blob[:10]} missing from the snapshot")
            continue
        target = destination / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.stdout)
        snapshot.files.append(path)
    if not snapshot.files:
        snapshot.problem = "none of its files could be taken: " + "; ".join(snapshot.issues)
    return snapshot


def take_around(snapshot: Snapshot, destination: Path) -> list[str]:
    """Every Python file and notebook at the commit in the folders that hold the snapshot's files
    (not below them), written under `destination`: the tree around the old-API files, most of it
    without any, on which `--check` is timed as a user runs it over a project."""
    if snapshot.where is None or not snapshot.present:
        return []
    commit = snapshot.entry.commit
    folders = sorted({str(Path(path).parent) for path in snapshot.files})
    written = []
    for folder in folders:
        spec = f"{commit}:{'' if folder == '.' else folder}"
        listing = _git(snapshot.where, "ls-tree", "-z", spec)
        for record in listing.stdout.decode("utf-8", "replace").split("\0"):
            if not record or "\t" not in record:
                continue
            info, name = record.split("\t", 1)
            mode, kind, blob = info.split()
            if kind != "blob" or mode == "120000" or not name.endswith((".py", ".ipynb")):
                continue
            content = _git(snapshot.where, "cat-file", "blob", blob)
            if content.returncode != 0:
                continue
            path = name if folder == "." else f"{folder}/{name}"
            (destination / path).parent.mkdir(parents=True, exist_ok=True)
            (destination / path).write_bytes(content.stdout)
            written.append(path)
    return written
