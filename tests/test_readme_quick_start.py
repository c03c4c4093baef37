"""The README's quick start runs as written: its commands in one shell, its printed lines seen.

Its commands (copy the bundled legacy project, commit it, migrate it to the shim, `verify`) are
the demo's last step as well (examples/run_demo.py, tests/test_example_project.py), which runs on
every anchor; this test checks the README's own text, on tf221 (noxfile.py's SOME_ANCHORS): the
TensorFlow its table of losses was printed on.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

README = pathlib.Path(__file__).parent.parent / "README.md"


def _quick_start():
    section = README.read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    [console] = re.findall(r"```console\n(.*?)```", section, flags=re.DOTALL)
    lines = console.splitlines()
    commands = [line[2:] for line in lines if line.startswith("$ ")]
    shown = [line for line in lines if not line.startswith("$ ") and line and line != "[...]"]
    return commands, shown


def test_readme_quick_start_runs_as_written(tmp_path):
    # From a copy of the repository's root as far as the commands use it: examples/legacy_project.
    shutil.copytree(
        README.parent / "examples" / "legacy_project", tmp_path / "examples" / "legacy_project"
    )
    commands, shown = _quick_start()
    assert [c.split()[0] for c in commands] == ["cp", "git", "compat-lso-migrate", "python"]
    env = {
        **os.environ,
        # The commands a user types: this environment's python and compat-lso-migrate.
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
        "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.com",
    }  # fmt: skip
    # One shell, line by line (compat-lso-migrate exits 1 when it changed files, as documented).
    result = subprocess.run(
        ["bash", "-c", "\n".join(commands)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr  # verify's: equal
    printed = result.stdout.splitlines()
    for line in shown:
        if not re.match(r"\s+\d+\s", line):
            assert line in printed, (line, result.stdout)
            continue
        # A row of the table. Its losses are TF 2.21's, as the README says: TF 2.15's float16
        # kernels round differently in the last digits (docs/old-code.md); the step, the scales,
        # whether each step applied and `iterations` are the same everywhere.
        step, _, _, *rest = line.split()
        rows = {row.split()[0]: row.split() for row in printed if re.match(r"\s+\d+\s", row)}
        assert rows[step][3:] == rest, (line, result.stdout)
