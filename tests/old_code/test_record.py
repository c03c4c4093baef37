"""The recorder writes what scripts report, with the command that made it, if repeatable."""

from __future__ import annotations

import json

import pytest

from tests.old_code import harness, record

REPORT = "import json, os\ndef report(**values):\n    print('RESULT ' + json.dumps(values))\n"
STEADY = REPORT + "report(loss=[0.5, 0.25], scale='inf')\n"
RANDOM = REPORT + "report(noise=os.urandom(8).hex())\n"
HELPER = REPORT  # defines report() but calls nothing: a helper, not a script


def _suite(tmp_path):
    (tmp_path / "steady.py").write_text(STEADY)
    (tmp_path / "common.py").write_text(HELPER)
    return tmp_path


def test_a_folder_stands_for_its_scripts_and_skips_helpers(tmp_path):
    suite = _suite(tmp_path)
    assert [path.name for path in record.scripts_in([str(suite)])] == ["steady.py"]


def test_records_results_keyed_by_path_with_the_command(tmp_path):
    suite = _suite(tmp_path)
    output = tmp_path / "out" / "reference.json"
    argv = ["--output", str(output), "--root", str(tmp_path), "--command", "make it", str(suite)]
    assert record.main(argv) == 0
    written = json.loads(output.read_text())
    assert written["results"] == {"steady.py": {"loss": [0.5, 0.25], "scale": "inf"}}
    assert written["command"] == "make it"
    assert written["recorder"].startswith("python -m tests.old_code.record --output ")
    assert written["mode"] == "native"
    assert set(written["versions"]) == {"python", "tensorflow", "keras", "tf_keras", "platform"}
    assert record.load(output) == written["results"]


def test_refuses_a_script_whose_numbers_change_between_runs(tmp_path):
    (tmp_path / "random.py").write_text(RANDOM)
    with pytest.raises(SystemExit, match="different numbers in repeated runs"):
        record.main(["--output", str(tmp_path / "r.json"), "--root", str(tmp_path), str(tmp_path)])
    assert not (tmp_path / "r.json").exists()


def test_a_failing_script_stops_the_recording(tmp_path):
    (tmp_path / "broken.py").write_text("raise SystemExit(3)\nreport()\n")
    with pytest.raises(harness.ScriptFailed, match="exited 3"):
        record.main(["--output", str(tmp_path / "r.json"), "--root", str(tmp_path), str(tmp_path)])


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="mode must be one of"):
        harness.run_script("x.py", "migrate-keras4")
