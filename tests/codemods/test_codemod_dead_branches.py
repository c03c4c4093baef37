"""A branch is live (every removed name in it is reported) or dead (nothing in it is rewritten)."""

import pytest

from codemods import table
from tests.codemods.codemod_cases import assert_unchanged, manual_codes, rewrite

TF = "import tensorflow as tf\n"
OLD = "    opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
PRIVATE = "tensorflow.python.training.experimental"


@pytest.mark.parametrize("target", table.TARGETS)
@pytest.mark.parametrize(
    "gate",
    [
        'if tf.__version__.startswith("2.2."):\n',
        "if StrictVersion(tf.__version__) < StrictVersion('2.4.0'):\n",
        "if StrictVersion(tf.__version__) < '2.4':\n",
        "if version.parse(tf.__version__) < version.parse('2.4'):\n",
    ],
    ids=["startswith", "strict-version", "strict-version-and-a-string", "packaging"],
)
def test_a_dead_branch_is_kept_as_written_with_a_note(gate, target):
    source = (
        TF
        + "from distutils.version import StrictVersion\n"
        + "from packaging import version\n"
        + gate
        + OLD
        + "    tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n"
    )
    findings = assert_unchanged(source, target)
    assert [(f.code, f.line, f.note) for f in findings] == [
        ("LSO001", 5, True),
        ("LSO004", 6, True),
    ]
    assert all("dead on TF >= 2.12: kept as written" in f.message for f in findings)


def test_the_live_branch_beside_a_dead_one_is_still_rewritten():
    source = TF + 'if tf.__version__.startswith("1."):\n' + OLD + "else:\n" + OLD
    text, findings = rewrite(source, "keras3")
    assert text.count("experimental.LossScaleOptimizer") == 1  # the dead branch's only
    assert [(f.code, f.line, f.note) for f in findings if f.code == "LSO001"] == [
        ("LSO001", 3, True),
        ("LSO001", 5, False),
    ]


@pytest.mark.parametrize("target", table.TARGETS)
def test_a_flag_of_another_module_that_spells_a_tf_version_is_an_undecided_gate(target):
    # Live: rewritten where a rule can, and every removed name in it reported, at its line.
    source = (
        TF
        + "from utils import compat\n"
        + "if compat.IS_PREV_TF_2_4_0:\n"
        + f"    from {PRIVATE} import loss_scale as loss_scale_module\n"
        + OLD
        + "    config = loss_scale_module.serialize(scale)\n"
    )
    text, findings = rewrite(source, target)
    assert "experimental.LossScaleOptimizer" not in text
    assert manual_codes(findings) == ["LSO014"]
    (private,) = [f for f in findings if f.code == "LSO014"]
    assert private.line == 6
    assert "branch of `if compat.IS_PREV_TF_2_4_0`, line 3" in private.message


@pytest.mark.parametrize("target", table.TARGETS)
def test_the_private_loss_scale_module_keeps_the_names_tf_still_has(target):
    source = (
        f"from {PRIVATE} import loss_scale\n"
        + "scale = loss_scale.DynamicLossScale()\n"
        + "fixed = loss_scale.get(128)\n"
    )
    assert not assert_unchanged(source, target)


@pytest.mark.parametrize("target", table.TARGETS)
def test_the_private_loss_scale_module_names_it_lost_are_reported(target):
    source = f"from {PRIVATE}.loss_scale import deserialize\n" + "scale = deserialize(config)\n"
    text, findings = rewrite(source, target)
    assert text == source
    # The import fails too: the sweep says so at its line.
    assert [(f.code, f.line, f.fixed) for f in findings] == [
        ("LSO101", 1, False),
        ("LSO014", 2, False),
    ]
