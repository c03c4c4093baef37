"""bench/ecosystem_check/trial.py and the manifest's trial fields (docs/real-projects.md), with
no network and no TensorFlow: every trial entry names a driver that exists and migrates files
whose blob ids the manifest pins, its edits are well formed, a hand edit replaces or follows one
line at its indentation, and a snapshot is extracted at its commit (not the newest) with the
driver at its root, committed as the old code."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench")]

from ecosystem_check import manifest, trial  # noqa: E402

EDIT_KEYS = {"target", "path", "line", "text", "why"}


def _trials() -> list[dict]:
    tables = tomllib.loads(manifest.MANIFEST.read_text(encoding="utf-8"))["repo"]
    return [t for t in tables if "driver" in t]


def test_five_repositories_have_a_trial_whose_files_the_manifest_pins():
    trials = _trials()
    assert len({t["name"] for t in trials}) >= 5
    for entry in trials:
        assert (ROOT / entry["driver"]).is_file(), entry["driver"]
        pinned = {f["path"] for f in entry["files"]}
        assert set(entry.get("take", [])) <= pinned, entry["name"]
        for edit in entry.get("prep", []) + entry.get("hand", []):
            assert EDIT_KEYS <= set(edit) <= EDIT_KEYS | {"insert"}, edit
            assert edit["target"] in ("all", "keras2", "keras3", "shim")
    manifest.load()  # the extra fields leave the ecosystem check's reading as it was


def test_a_hand_edit_replaces_or_follows_a_line_at_its_indentation(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def f():\n    a = 1\n    return a\n", encoding="utf-8")
    trial.hand_edit(tmp_path, {"path": "m.py", "line": 2, "text": "a = 2", "why": "w"}, "hand")
    trial.hand_edit(
        tmp_path, {"path": "m.py", "line": 2, "text": "b = a", "why": "w", "insert": True}, "hand"
    )
    assert path.read_text(encoding="utf-8") == "def f():\n    a = 2\n    b = a\n    return a\n"


def _git(folder: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args]
    return subprocess.run(command, cwd=folder, check=True, capture_output=True, text=True).stdout


def test_the_snapshot_is_taken_at_its_commit_with_the_driver_at_its_root(tmp_path):
    clone = tmp_path / "mirror" / "o+n" / "repo"
    source = tmp_path / "source"
    source.mkdir()
    _git(source, "init", "-q")
    (source / "pkg").mkdir()
    (source / "pkg" / "m.py").write_text("OLD = 1\n", encoding="utf-8")
    _git(source, "add", "-A")
    _git(source, "commit", "-q", "-m", "old")
    pinned = _git(source, "rev-parse", "HEAD").strip()
    (source / "pkg" / "m.py").write_text("NEW = 1\n", encoding="utf-8")
    _git(source, "commit", "-q", "-am", "new")
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(clone)], check=True)
    work = tmp_path / "work"
    work.mkdir()
    entry: dict[str, Any] = {
        "name": "o/n",
        "commit": pinned,
        "driver": "bench/ecosystem_check/drivers/dreamerv2.py",
        "extract": ["pkg"],
        "prep": [{"target": "all", "path": "pkg/m.py", "line": 1, "text": "OLD = 2", "why": "w"}],
    }
    trial.prepare(entry, tmp_path / "mirror", work)
    assert (work / "pkg" / "m.py").read_text(encoding="utf-8") == "OLD = 2\n"
    assert (work / trial.DRIVER_NAME).read_bytes() == (ROOT / entry["driver"]).read_bytes()
    assert (work / "_trial_stubs.py").is_file()
    assert _git(work, "status", "--porcelain") == ""  # all of it is the old code, committed
