"""What the verify tests share: git in a test repository, and `verify` run as a user runs it."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from typing import Any


def git(repo: pathlib.Path, *arguments: str) -> str:
    """Run git in `repo`; its standard output."""
    return subprocess.run(
        ["git", "-C", str(repo), *arguments], check=True, capture_output=True, text=True
    ).stdout


def run_verify(folder: pathlib.Path, arguments: list[str]) -> tuple[int, str, Any]:
    """`python -m compat_lso verify --json verdict.json ARGUMENTS` in `folder`: its exit status,
    its output (stdout, then stderr) and the JSON verdict (None if none was written)."""
    result = subprocess.run(
        [sys.executable, "-m", "compat_lso", "verify", "--json", "verdict.json", *arguments],
        cwd=folder, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    verdict = folder / "verdict.json"
    document = json.loads(verdict.read_text()) if verdict.exists() else None
    return result.returncode, result.stdout + result.stderr, document
