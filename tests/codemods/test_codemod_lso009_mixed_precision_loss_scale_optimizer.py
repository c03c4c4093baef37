"""LSO009: tf.train.experimental.MixedPrecisionLossScaleOptimizer -> tf.compat.v1 (graph mode)."""

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged


def test_rewrites():
    assert_rewrites(
        "import tensorflow as tf\n"
        "opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, 'dynamic')\n",
        "import tensorflow as tf\n"
        "opt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, 'dynamic')\n",
    )


def test_noop_for_compat_v1():
    assert_unchanged(
        "import tensorflow as tf\n"
        "opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(opt, 'dynamic')\n"
    )
