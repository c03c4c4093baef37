"""LSO008: enable_mixed_precision_graph_rewrite (and disable_): reported on keras2 and keras3,
rewritten to compat_lso.experimental's on the shim (what `python -m compat_lso run` gives them)."""

import pytest

from codemods import table
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes


@pytest.mark.parametrize("target", ["keras2", "keras3"])
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


@pytest.mark.parametrize("target", ["keras2", "keras3"])
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


def test_the_shim_writes_its_own_functions():
    # The loss scale object moves with it (LSO007); compat_lso's function takes it, and for a
    # tf.compat.v1 optimizer trains as TensorFlow's own TF1 function does (same numbers, float16
    # overflow included, on TF 2.15 and 2.21: compat_lso/legacy/graph_rewrite.py delegates).
    findings = assert_rewrites(
        "import tensorflow as tf\n"
        "scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=2**10)\n"
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, scale)\n"
        "tf.train.experimental.disable_mixed_precision_graph_rewrite()\n",
        "import compat_lso\n"
        "scale = compat_lso.experimental.DynamicLossScale(initial_loss_scale=2**10)\n"
        "opt = compat_lso.experimental.enable_mixed_precision_graph_rewrite(opt, scale)\n"
        "compat_lso.experimental.disable_mixed_precision_graph_rewrite()\n",
        "shim",
    )
    assert [(f.code, f.fixed, f.note) for f in findings] == [
        ("LSO007", True, False),
        ("LSO008", True, False),
        ("LSO008", True, False),
    ]


def test_the_shim_keeps_a_tf1_modules_alias():
    # TF1 code through the compat.v1 module: the same old function, the same shim function.
    assert_rewrites(
        "import tensorflow.compat.v1 as tf\n"
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n",
        "import tensorflow.compat.v1 as tf\n"
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n",
        "shim",
    )


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_suppressed_is_left_alone(target):
    assert not manual_codes(
        assert_unchanged(
            "import tensorflow as tf\n"
            "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)"
            "  # compat-lso: ignore[LSO008]\n",
            target,
        )
    )
