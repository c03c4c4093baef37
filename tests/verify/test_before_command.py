"""verify's plumbing with programs that import no TensorFlow (cheap): `--before CMD` gets the
trace's variables and the seed and runs in the working directory; the progress bar counts the
steps both traces show; a program that never steps a loss scale optimizer cannot be compared.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

from compat_lso.verify import cli, sides

# Stands in for an old program run through `run`: writes a trace of two steps by hand, as
# compat_lso.trace would, to the file verify names, and says what it was given.
FAKE_BEFORE = textwrap.dedent(
    """
    import json, os, pathlib
    pathlib.Path("seen.json").write_text(json.dumps({
        "steps": os.environ["COMPAT_LSO_TRACE_STEPS"], "seed": os.environ.get("COMPAT_LSO_SEED"),
        "data": pathlib.Path("data.txt").read_text(),
    }))
    step = {"event": "step", "optimizer": 0, "class": "c", "where": "old.py:3",
            "scale_before": 4.0, "scale_after": 4.0, "applied": True, "loss": 1.0,
            "digest": [["w", 1.0]]}
    with open(os.environ["COMPAT_LSO_TRACE"], "w") as trace:
        trace.write(json.dumps({"event": "start", "versions": {}, "argv": [], "steps": 2}) + "\\n")
        for n in (1, 2):
            trace.write(json.dumps({**step, "step": n, "iterations": n}) + "\\n")
        trace.write(json.dumps({"event": "stopped", "reason": "steps", "steps": 2}) + "\\n")
    """
)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "fake_before.py").write_text(FAKE_BEFORE)
    (tmp_path / "new.py").write_text("print('no loss scale optimizer here')\n")
    (tmp_path / "data.txt").write_text("in the working directory")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_before_command_is_run_with_the_trace_variables_and_the_seed(folder, capsys):
    before = f"{sys.executable} fake_before.py"
    status = cli.main(
        ["--before", before, "--steps", "2", "--seed", "9", "--json", "v.json", "new.py"],
        progress=False,
    )
    output = capsys.readouterr().out
    assert json.loads((folder / "seen.json").read_text()) == {
        "steps": "2", "seed": "9", "data": "in the working directory",
    }  # fmt: skip
    # The after program stepped no loss scale optimizer: its step 1 is missing.
    assert status == 1, output
    assert "diverged at step 1 of loss scale optimizer 0: the after run made no such step " in (
        output
    )
    assert "audit: not run on this side (--before CMD)" in output
    document = json.loads((folder / "v.json").read_text())
    assert document["before"]["command"] == [sys.executable, "fake_before.py"]
    assert document["after"]["end"] == {"event": "exit", "status": 0}


def test_neither_run_stepping_cannot_be_compared(folder, capsys):
    before = f"{sys.executable} -m compat_lso trace new.py"
    status = cli.main(["--before", before, "new.py"], progress=False)
    assert status == 2
    assert "verify: could not run: no loss scale optimizer was ever stepped in either run" in (
        capsys.readouterr().out
    )


def test_a_before_command_that_writes_no_trace_is_named(folder, capsys):
    status = cli.main(["--before", f"{sys.executable} new.py", "new.py"], progress=False)
    output = capsys.readouterr().out
    assert status == 2
    assert "verify: could not run: the before run failed before its first step: it wrote no " in (
        output
    )
    assert "through `python -m compat_lso run` or `trace`" in output
    assert "its output ends:\n  no loss scale optimizer here" in output


def test_the_progress_bar_counts_both_runs_steps(folder, capsys):
    trace = folder / "t.jsonl"
    line = json.dumps({"event": "step", "optimizer": 0, "step": 1})
    slow = f"import time; open({str(trace)!r}, 'w').write({line!r} + '\\n'); time.sleep(1)"
    side = sides.Side("before", [sys.executable, "-c", slow], [], trace, folder / "o.log")
    sides.start([side], folder, steps=3, seed=None)
    sides.wait([side], steps=3, progress=True)
    assert side.returncode == 0
    assert "before 1/3" in capsys.readouterr().err
    subprocess.run([sys.executable, "-c", "pass"], check=True)  # nothing left running


def test_piped_the_last_progress_line_says_where_the_runs_ended(folder, capsys, monkeypatch):
    # Issue 38: `make demo` ended with "verify: before 0/20  after 0/20 steps", the line of 5 s
    # in, after twelve equal steps. Piped, the last line is the steps the runs made in the end.
    monkeypatch.setattr(sides, "PROGRESS_EVERY_S", 0.0)
    trace = folder / "t.jsonl"
    lines = [json.dumps({"event": "step", "optimizer": 0, "step": n}) for n in (1, 2, 3)]
    slow = (
        f"import time; f = open({str(trace)!r}, 'w', buffering=1); f.write({lines[0]!r} + '\\n');"
        f" time.sleep(1.5); f.write({lines[1]!r} + '\\n' + {lines[2]!r} + '\\n')"
    )
    side = sides.Side("before", [sys.executable, "-c", slow], [], trace, folder / "o.log")
    sides.start([side], folder, steps=3, seed=None)
    sides.wait([side], steps=3, progress=False)
    shown = [line for line in capsys.readouterr().err.splitlines() if line.startswith("verify:")]
    assert any(line.startswith("verify: before 1/3 steps") for line in shown), shown
    assert shown[-1].startswith("verify: before 3/3 steps"), shown


def test_the_docs_make_the_old_tensorflows_environment_with_the_command_verify_names():
    # verify's refusal of a --before-python without TensorFlow names this command; the docs
    # show the same one.
    page = (pathlib.Path(__file__).parents[2] / "docs" / "verify.md").read_text()
    assert f"$ {sides.OLD_TENSORFLOW}\n" in page
