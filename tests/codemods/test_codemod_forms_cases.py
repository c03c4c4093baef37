"""What the forms of tests/codemods/forms/ must keep showing, said as assertions (their whole
output is pinned by test_codemod_forms.py; here, the point of each, so that a regeneration that
loses it fails). Two named cases of the real-file corpus these forms replace live beside their
rules: the dynamic Policy that used to block its file
(test_codemod_lso006_policy.py::test_the_only_blocker_of_a_file_no_longer_blocks_it) and the
TF 2.2 workaround under a dead version gate
(test_codemod_lso104_old_version_branch.py::test_a_tf_2_2_workaround_is_a_note_on_every_target);
the graph rewrite's calls are test_codemod_lso008_graph_rewrite.py::test_the_forms_real_files_show.
"""

from __future__ import annotations

import functools
import json

import pytest

from codemods.io.files import migrate_bytes
from codemods.source import Finding
from codemods.table import TARGETS, Target
from tests.codemods.test_codemod_forms import FORMS


@functools.cache
def _migrated(name: str, target: Target) -> tuple[str, list[Finding]]:
    """The form written on `target`, and its findings as write mode gives them (positions in the
    text written)."""
    path = FORMS / name
    outcome = migrate_bytes(str(path), path.read_bytes(), target, None, as_written=True)
    assert outcome.error is None and outcome.result is not None, outcome.error
    return outcome.text, outcome.result.findings


def _manual(findings: list[Finding]) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in findings if not f.fixed]


def _code(notebook: str) -> tuple[list[str], str]:
    """A notebook's cell sources, and its code cells joined."""
    cells = json.loads(notebook)["cells"]
    sources = ["".join(c["source"]) for c in cells]
    code = "\n".join(s for c, s in zip(cells, sources, strict=True) if c["cell_type"] == "code")
    return sources, code


ACCUMULATOR = "lso011_accumulator_parameter.py"
GUIDE_TF23 = "notebook_tf23_guide.ipynb"
GUIDE_TF24 = "notebook_tf24_guide.ipynb"
DETECTION = "lso025_wrapper_class_by_feature_detection.py"


@pytest.mark.parametrize("target", TARGETS)
def test_the_policy_and_the_optimizer_are_migrated_together(target):
    # ELECTRA's pretraining: Policy(name, loss_scale="dynamic") and the experimental class in
    # main(), a step that accumulates into a parameter. On keras3 the accumulator is out of sight:
    # unscaled explicitly, every apply_gradients scaled back, nothing left to the user.
    text, findings = _migrated(ACCUMULATOR, target)
    assert "mixed_precision.experimental" not in text
    assert 'Policy("mixed_float16")' in text
    new = "compat_lso" if target == "shim" else "tf.keras.mixed_precision"
    assert f"{new}.LossScaleOptimizer(opt)" in text
    assert _manual(findings) == []
    if target == "keras3":
        assert "scale_loss(1.0), grad.dtype), grad) for grad in clipped]" in text
        assert "get_scaled_loss" not in text and "get_unscaled_gradients" not in text


@pytest.mark.parametrize("target", TARGETS)
def test_the_tf23_notebook_keeps_its_shell_lines_and_says_what_blocks_it(target):
    # One cell builds Policy('mixed_float16', loss_scale=512): on keras2/keras3 that keeps the
    # `mp` alias (reported), and the other uses are written through the notebook's own
    # `from tensorflow import keras` instead; on shim it moves to compat_lso.experimental.Policy
    # and the rest is migrated.
    text, findings = _migrated(GUIDE_TF23, target)
    sources, code = _code(text)
    assert "!nvidia-smi --query-gpu=name --format=csv" in sources
    assert "%time step(tf.ones((8, 16)), tf.zeros((8,)))" in sources
    manual = [f for f in findings if not f.fixed and f.code != "LSO018"]
    # Cell 8 reads `policy.loss_scale` of the renamed Policy, which the new one lacks (the
    # sweep's LSO100), on every target.
    lso100 = [f for f in manual if f.code == "LSO100"]
    assert len(lso100) == 1 and lso100[0].message.startswith("[cell 8] `policy.loss_scale`")
    assert "does not exist on the new Policy" in lso100[0].message
    if target == "shim":
        assert [f.code for f in manual] == ["LSO100"]
        assert "mp.set_global_policy(policy)" in code
        assert "compat_lso.experimental.Policy('mixed_float16', loss_scale=512)" in code
        assert code.count("compat_lso.install()") == 1  # cell 9's Policy needs it, once
        return
    assert "keras.mixed_precision.set_global_policy(policy)" in code
    assert "keras.mixed_precision.LossScaleOptimizer(opt)" in code
    assert "import experimental as mp" in code  # kept for cell 9
    assert [f.code for f in manual] == ["LSO101", "LSO100", "LSO006"]
    assert manual[2].message.startswith("[cell 9] ") and "loss_scale=512" in manual[2].message
    assert not any("another use left to you" in f.message for f in findings)


@pytest.mark.parametrize("guide", [GUIDE_TF23, GUIDE_TF24])
@pytest.mark.parametrize("target", TARGETS)
def test_the_notebooks_dtype_names_are_rewritten_where_keras3_runs_them(guide, target):
    # `print('probs: %s' % probs.dtype.name)` fails on Keras 3 (a string dtype): the tutorial
    # code most people copied must not be left to fail under `run` or after a migration.
    text, findings = _migrated(guide, target)
    found = [f for f in findings if f.code == "LSO018"]
    if target == "keras2":
        assert found == []
        assert "probs.dtype.name" in text
        return
    assert [f.fixed for f in found] == [True] * 3, found
    assert ".dtype.name" not in text
    for name in ("h.dtype", "hidden.kernel.dtype", "probs.dtype"):
        assert f'getattr({name}, \\"name\\", {name})' in text


@pytest.mark.parametrize("target", TARGETS)
def test_the_class_stored_in_a_name_in_a_feature_detection_branch_is_not_silent(target):
    # `cls = tf.keras.mixed_precision.experimental.LossScaleOptimizer` in the else branch of
    # `if has_api(...)`: rewritten with its kwargs, or, where any of it is left, reported at its
    # line of the file as written.
    text, findings = _migrated(DETECTION, target)
    left = [
        number
        for number, line in enumerate(text.splitlines(), start=1)
        if "cls = tf.keras.mixed_precision.experimental." in line
    ]
    assert set(left) <= {line for line, _ in _manual(findings)}
    lso025 = [f for f in findings if f.code == "LSO025"]
    assert [f.fixed for f in lso025] == [True]
    if target == "shim":
        assert "cls = compat_lso.experimental.LossScaleOptimizer" in text
    else:
        assert left == [] and 'kwargs = dict(loss_scale="dynamic")' not in text
