"""Why a place stays manual (codemods/table/reasons.py): every manual finding says it in one word.

Each word is reached by a short source written here, every manual finding of the forms of real
files has a word of the table, and `--statistics` counts them under `manual, by reason:`, with
counts worked out by hand for a small input.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from codemods.apply.engine import migrate
from codemods.cli import main
from codemods.io import formats
from codemods.source import Finding
from codemods.table import REASONS, TARGETS

FORMS = Path(__file__).parent / "forms"
MIXED = "import tensorflow as tf\npolicy = tf.keras.mixed_precision.Policy('mixed_float16')\n"

# (reason, target, the source, the code of the finding that gives it): one short form per word.
REACHED = [
    pytest.param(
        "run-time",
        "keras2",
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, get_scale())
        """,
        "LSO001",
        id="run-time",
    ),
    pytest.param(
        "elsewhere",
        "keras2",
        """\
        import tensorflow as tf
        import solvers
        scale = solvers.loss_scale()
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, scale)
        """,
        "LSO001",
        id="elsewhere",
    ),
    pytest.param(
        "keras3-fixed",
        "keras3",
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(make(), dynamic=False, initial_scale=8)
        """,
        "LSO015",
        id="keras3-fixed",
    ),
    pytest.param(
        "no-equivalent",
        "keras3",
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        opt.minimize(loss, var_list)
        """,
        "LSO011",
        id="no-equivalent",
    ),
    pytest.param(
        "private",
        "keras3",
        """\
        from tensorflow.python.keras.mixed_precision.experimental import loss_scale
        scale = loss_scale.get("dynamic")
        """,
        "LSO014",
        id="private",
    ),
    pytest.param(
        "choice",
        "keras3",
        MIXED + "opt = tf.keras.optimizers.SGD(learning_rate=0.1, lr=0.7)\n",
        "LSO026",
        id="choice",
    ),
    pytest.param(
        "gated",
        "keras3",
        """\
        import tensorflow as tf
        if hasattr(tf.keras.mixed_precision, "experimental"):
            scale = tf.keras.mixed_precision.experimental.LossScale
        """,
        "LSO104",
        id="gated",
    ),
    pytest.param(
        "invalid",
        "keras3",
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd, dynamic=False)
        """,
        "LSO015",
        id="invalid",
    ),
    pytest.param(
        "follows",
        "keras2",
        """\
        from tensorflow.keras.mixed_precision import experimental as mp
        opt = mp.LossScaleOptimizer(opt, get_scale())
        mp.set_policy("mixed_float16")
        """,
        "LSO004",
        id="follows",
    ),
    pytest.param(
        "limit",
        "keras3",
        MIXED + "print(model(x)[0].dtype.name)\n",
        "LSO018",
        id="limit",
    ),
]


def run(*argv: str) -> int:
    return main(list(argv))


def manual(text: str, target) -> list[Finding]:
    return [f for f in migrate(textwrap.dedent(text), target).findings if not f.fixed]


def test_every_word_of_the_table_has_a_form_here():
    assert {case.values[0] for case in REACHED} == set(REASONS)


@pytest.mark.parametrize(("reason", "target", "source", "code"), REACHED)
def test_each_reason_is_reached(reason, target, source, code):
    found = [(f.code, f.reason) for f in manual(source, target)]
    assert (code, reason) in found, found


def test_a_rewrite_and_a_note_carry_no_reason():
    findings = migrate(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, 'dynamic')\n",
        "keras3",
    ).findings
    assert {f.note for f in findings} == {False, True}  # the rewrite, and LSO022's note
    assert all(f.fixed and f.reason == "" for f in findings)


@pytest.mark.parametrize("target", TARGETS)
def test_every_manual_finding_of_the_forms_has_a_reason_of_the_table(target):
    seen = 0
    for form in sorted(FORMS.glob("*.py")):
        for finding in manual(form.read_text(encoding="utf-8"), target):
            seen += 1
            assert finding.reason in REASONS, (form.name, finding)
    assert seen or target == "shim"  # the forms leave manual work on keras2 and keras3


# -- --statistics: the block, with counts worked out by hand ---------------------------------------
# keras3, three manual places and one rewrite:
# - line 2: the experimental class with a run-time loss scale `get_scale()`: LSO001, run-time;
# - line 3: the TF 2.4 class with dynamic=False and no initial_scale: LSO015, invalid;
# - line 4: the TF 2.4 class with dynamic=False, a fixed scale, an inner optimizer not built
#   here: LSO015, keras3-fixed;
# - line 5: set_policy -> set_global_policy: LSO004, fixed.
SMALL = (
    "import tensorflow as tf\n"
    "a = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, get_scale())\n"
    "b = tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False)\n"
    "c = tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False, initial_scale=8)\n"
    "tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n"
)
BY_HAND = {"run-time": 1, "keras3-fixed": 1, "invalid": 1}


def test_statistics_counts_the_manual_findings_by_reason(tmp_path, capsys):
    (tmp_path / "a.py").write_text(SMALL)
    run("--check", "--statistics", "--target", "keras3", str(tmp_path))
    out = capsys.readouterr().out.splitlines()
    start = out.index("manual, by reason:")
    # In the table's order, each with its meaning, before the share line.
    assert out[start + 1 :] == [
        f"  1  run-time      {REASONS['run-time']}",
        f"  1  keras3-fixed  {REASONS['keras3-fixed']}",
        f"  1  invalid       {REASONS['invalid']}",
        "share fixed (keras3): 25.0% (1 fixed, 3 manual; notes not counted)",
    ]
    run("--check", "--statistics", "--format", "json", "--target", "keras3", str(tmp_path))
    assert json.loads(capsys.readouterr().out)[-1]["by_reason"] == BY_HAND


def test_json_and_sarif_carry_the_reason_of_each_finding(tmp_path, capsys):
    (tmp_path / "a.py").write_text(SMALL)
    run("--check", "--format", "json", "--target", "keras3", str(tmp_path))
    found = json.loads(capsys.readouterr().out)
    assert Counter(f["reason"] for f in found if f["kind"] == "manual") == BY_HAND
    assert {f["reason"] for f in found if f["kind"] != "manual"} == {None}
    run("--check", "--format", "sarif", "--target", "keras3", str(tmp_path))
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    reasons = [r.get("properties", {}).get("reason") for r in results if r["level"] == "warning"]
    assert Counter(reasons) == BY_HAND


def test_no_block_where_nothing_is_manual():
    assert formats.by_reason_text(formats.by_reason([])) == []


def test_the_docs_list_every_word_with_its_meaning():
    page = (Path(__file__).parents[2] / "docs" / "codemod.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    for reason, meaning in REASONS.items():
        assert f"| `{reason}` | {meaning} |" in rows, reason
