"""verify's refusals, each before any program runs: exit status 2 and a message naming the fix.

No TensorFlow process starts here: every case is refused before the runs (git only).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from compat_lso.verify import cli, sides
from tests.verify.support import git


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "old.py").write_text("print('old')\n")
    git(root, "add", "old.py")
    git(root, "commit", "-qm", "old")
    (root / "new.py").write_text("print('new')\n")  # untracked: not at HEAD
    monkeypatch.chdir(root)
    return root


def _refused(capsys, argv):
    status = cli.main(argv, progress=False)
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_not_a_git_repository(tmp_path, monkeypatch, capsys):
    (tmp_path / "train.py").write_text("")
    monkeypatch.chdir(tmp_path)
    status, output = _refused(capsys, ["train.py"])
    assert status == 2
    assert f"not a git repository: {tmp_path}" in output and "--before CMD" in output


def test_a_ref_that_does_not_exist(repo, capsys):
    status, output = _refused(capsys, ["--against", "no-such-branch", "old.py"])
    assert status == 2
    assert "--against: no such commit in" in output and "'no-such-branch'" in output
    assert subprocess.run(["git", "worktree", "list"], capture_output=True, text=True,
                          check=True).stdout.count("\n") == 1  # fmt: skip


def test_a_script_the_ref_does_not_have(repo, capsys):
    status, output = _refused(capsys, ["new.py"])
    assert status == 2
    assert "new.py does not exist at HEAD" in output
    # The temporary worktree is gone again.
    listed = subprocess.run(["git", "worktree", "list"], capture_output=True, text=True, check=True)
    assert listed.stdout.count("\n") == 1


def test_a_before_command_that_does_not_exist(repo, capsys):
    status, output = _refused(capsys, ["--before", "no-such-command --flag", "old.py"])
    assert status == 2
    assert "the before run's command could not start: no-such-command --flag:" in output


def test_a_before_python_that_cannot_run_or_has_no_tensorflow(repo, tmp_path, capsys):
    # Refused before the checkout: the path, or an interpreter without TensorFlow (this Python
    # with no site directory: no site-packages), each named with the command that makes one.
    bare = tmp_path / "bare-python"
    bare.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    bare.chmod(0o755)
    cases = {
        str(tmp_path / "no-such-python"): "cannot run it",
        str(bare): "has no TensorFlow installed",
    }
    for python, fact in cases.items():
        status, output = _refused(capsys, ["--before-python", python, "old.py"])
        assert status == 2, output
        assert f"verify: could not run: --before-python {python}" in output and fact in output
        assert sides.OLD_TENSORFLOW in output
    listed = subprocess.run(["git", "worktree", "list"], capture_output=True, text=True, check=True)
    assert listed.stdout.count("\n") == 1


def test_a_script_outside_the_repository(repo, tmp_path, capsys):
    outside = tmp_path / "elsewhere.py"
    outside.write_text("")
    status, output = _refused(capsys, [str(outside)])
    assert status == 2 and "is outside the git repository" in output


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0", "old.py"], "--steps must be at least 1, but got: 0"),
        (["--rtol", "-1", "old.py"], "--rtol must be 0 or more"),
        ([], "verify needs a SCRIPT to run (or -m MODULE)"),
        (["missing.py"], "no such script: 'missing.py'"),
        (["--against", "HEAD", "--before", "x", "old.py"], "not allowed with argument"),
        (["--seed", "1", "--no-seed", "old.py"], "not allowed with argument"),
        (
            ["--before", "x", "--before-python", "python", "old.py"],
            "--before-python and --before CMD cannot be combined",
        ),
    ],
)
def test_bad_arguments_name_the_argument(repo, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv, progress=False)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is not None,
    reason="matplotlib is installed here: the missing extra cannot be shown",
)
def test_plot_without_matplotlib_names_the_extra(repo, capsys):
    status, output = _refused(capsys, ["--plot", "out.png", "old.py"])
    assert status == 2
    assert "--plot needs matplotlib" in output and "`plot` extra" in output
    assert 'pip install ".[plot]" in compat-lso\'s clone' in output
