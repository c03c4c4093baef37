"""LSO008: enable_mixed_precision_graph_rewrite (and disable_) is reported on every target."""

import pytest

from codemods import table
from tests.codemods.codemod_cases import assert_unchanged, manual_codes


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_reported(target):
    findings = assert_unchanged(
        "import tensorflow as tf\n"
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n",
        target,
    )
    assert manual_codes(findings) == ["LSO008"]
    assert findings[0].message == (
        "tf.train.experimental.enable_mixed_precision_graph_rewrite was removed"
    )
    # No rewrite keeps the numbers for both kinds of optimizer, and the call does not say which
    # it is: the help names the tf.compat.v1 function (same numbers on TF 2.15 and 2.21, for a
    # tf.compat.v1 optimizer) and --explain the Keras way.
    assert "tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite" in findings[0].help
    assert "--explain LSO008" in findings[0].help
    assert "set_global_policy('mixed_float16')" in table.RULES_BY_CODE["LSO008"].details


def test_noop_for_the_compat_v1_function():
    assert not assert_unchanged(
        "import tensorflow as tf\n"
        "opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)\n"
    )


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_the_disable_counterpart_is_reported_too(target):
    # Gone from tf.train.experimental with enable_ (TF 2.15 has neither): it used to pass in
    # silence.
    findings = assert_unchanged(
        "import tensorflow as tf\ntf.train.experimental.disable_mixed_precision_graph_rewrite()\n",
        target,
    )
    assert manual_codes(findings) == ["LSO008"]
    assert "nothing to turn off; delete the call" in findings[0].message


def test_noop_for_the_compat_v1_disable():
    assert not assert_unchanged(
        "import tensorflow as tf\n"
        "tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()\n"
    )
