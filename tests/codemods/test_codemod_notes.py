"""Notes: behaviour a migration keeps or changes by design is printed in every output format and
counted apart in the summary, never hidden behind "0 findings"; `--explain CODE` holds the long
text the findings point to."""

import json

import pytest

from codemods import table
from codemods.cli import EXIT_CLEAN, main

# After --target keras3 Keras 3's class runs it: LSO022's note, nothing to rewrite.
KERAS3_NOTE = "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"


@pytest.fixture
def noted(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(KERAS3_NOTE)
    return path


@pytest.mark.parametrize("mode", [[], ["--check"], ["--diff"]])
def test_text_prints_the_note_and_counts_it(noted, capsys, mode):
    assert main([*mode, "--target", "keras3", str(noted)]) == EXIT_CLEAN  # nothing to do
    captured = capsys.readouterr()
    shown = captured.err if mode == ["--diff"] else captured.out
    assert f"{noted}:2:7: LSO022 [note] Keras 3's dynamic rule: no floor at 1" in shown
    assert f"\n  help: {table.RULES_BY_CODE['LSO022'].instruction}\n" in shown
    assert "0 finding(s) need manual work; 1 note(s); 0 error(s)" in captured.err
    assert noted.read_text() == KERAS3_NOTE


def test_json_marks_notes(noted, capsys):
    main(["--check", "--format", "json", "--target", "keras3", str(noted)])
    [finding] = json.loads(capsys.readouterr().out)
    assert finding["code"] == "LSO022" and finding["kind"] == "note"
    assert not finding["fixable"]


def test_github_prints_notes_as_notices(noted, capsys):
    main(["--format", "github", "--target", "keras3", str(noted)])
    assert capsys.readouterr().out.startswith(f"::notice file={noted},line=2,col=7,title=LSO022::")


def test_sarif_marks_notes_informational(noted, capsys):
    main(["--format", "sarif", "--target", "keras3", str(noted)])
    [result] = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert result["ruleId"] == "LSO022" and result["kind"] == "informational"
    assert result["level"] == "note"


def test_shim_note_where_the_code_relies_on_keras2s_apply_gradients(tmp_path, capsys):
    path = tmp_path / "loop.py"
    path.write_text(
        KERAS3_NOTE + "with tf.GradientTape() as tape:\n    loss = f(w)\n"
        "opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))\n"
    )
    main(["--target", "shim", str(path)])
    captured = capsys.readouterr()
    # line 6 of the file as written: `import compat_lso` went in above it
    assert ":6:1: LSO020 [note] opt.apply_gradients gets gradients of the unscaled loss" in (
        captured.out
    )
    assert "rewrote 1 file(s); 0 finding(s) need manual work; 1 note(s)" in captured.err


@pytest.mark.parametrize("code", ["LSO011", "LSO020", "lso022"])
def test_explain_prints_the_rules_whole_text(code, capsys):
    assert main(["--explain", code]) == EXIT_CLEAN
    out = capsys.readouterr().out
    rule = table.RULES_BY_CODE[code.upper()]
    assert out.startswith(f"{rule.code} {rule.name}: ")
    assert rule.note in out and rule.instruction in out


def test_explain_unknown_code_names_the_argument(capsys):
    with pytest.raises(SystemExit):
        main(["--explain", "LSO999"])
    assert "--explain: unknown rule code(s) LSO999" in capsys.readouterr().err
