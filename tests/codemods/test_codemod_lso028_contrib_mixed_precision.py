"""LSO028: TF 1's tf.contrib.mixed_precision, which TF 2 does not have, is reported everywhere."""

import pytest

from codemods import table
from codemods.io.prefilter import may_contain_targets
from tests.codemods.codemod_cases import assert_unchanged, manual_codes

TF = "import tensorflow as tf\n"


@pytest.mark.parametrize("target", table.TARGETS)
def test_the_optimizer_and_its_manager_are_reported_on_every_target(target):
    source = (
        TF + "manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(2**15, 1000)\n"
        "opt = tf.contrib.mixed_precision.LossScaleOptimizer(opt, manager)\n"
    )
    findings = assert_unchanged(source, target)
    assert manual_codes(findings) == ["LSO028", "LSO028"]
    assert [(f.line, f.col) for f in findings] == [(2, 11), (3, 7)]  # 1-based columns
    assert "no tf.contrib" in findings[0].message
    assert findings[0].help == table.RULES_BY_CODE["LSO028"].instruction_on(target)


@pytest.mark.parametrize("target", table.TARGETS)
def test_an_import_and_the_names_it_binds_are_reported(target):
    source = (
        "from tensorflow.contrib.mixed_precision import FixedLossScaleManager\n"
        "manager = FixedLossScaleManager(128)\n"
    )
    findings = assert_unchanged(source, target)
    assert [(f.code, f.line, f.fixed) for f in findings] == [
        ("LSO028", 1, False),
        ("LSO028", 2, False),
    ]


def test_the_prefilter_lets_a_file_that_only_uses_it_in():
    data = b"import tensorflow as tf\nm = tf.contrib.mixed_precision.FixedLossScaleManager(8)\n"
    assert all(may_contain_targets(data, target) for target in table.TARGETS)


@pytest.mark.parametrize("target", table.TARGETS)
def test_noop_for_other_contrib_modules_and_tf2_names(target):
    source = (
        TF + "layer = tf.contrib.layers.fully_connected(x, 10)\n"
        "opt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, 128)\n"
    )
    assert not assert_unchanged(source, target)


def test_a_suppression_comment_silences_it():
    source = (
        TF
        + "m = tf.contrib.mixed_precision.FixedLossScaleManager(8)  # compat-lso: ignore[LSO028]\n"
    )
    assert not manual_codes(assert_unchanged(source))
