"""LSO007: the LossScale classes outside an optimizer call."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged


@pytest.mark.parametrize(
    ("before", "after", "target"),
    [
        pytest.param(
            "import tensorflow as tf\ns = tf.mixed_precision.experimental.FixedLossScale(8)\n",
            "import tensorflow as tf\ns = tf.compat.v1.mixed_precision.FixedLossScale(8)\n",
            "keras2",
            id="mixed_precision-experimental",
        ),
        pytest.param(
            "import tensorflow as tf\ns = tf.train.experimental.DynamicLossScale()\n",
            "import tensorflow as tf\ns = tf.compat.v1.mixed_precision.DynamicLossScale()\n",
            "keras3",
            id="train-experimental",
        ),
        pytest.param(
            "import tensorflow as tf\n"
            "ok = isinstance(s, tf.mixed_precision.experimental.LossScale)\n",
            "import compat_lso\nok = isinstance(s, compat_lso.experimental.LossScale)\n",
            "shim",
            id="shim",
        ),
    ],
)
def test_rewrites(before, after, target):
    assert_rewrites(before, after, target)


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            "import tensorflow as tf\ns = tf.compat.v1.mixed_precision.FixedLossScale(8)\n",
            id="compat-v1-still-exists",
        ),
        pytest.param(
            "import tensorflow as tf\nstate = tf.train.experimental.PythonState()\n",
            id="unrelated-train-experimental-member",
        ),
    ],
)
def test_noop(before):
    assert not assert_unchanged(before)
