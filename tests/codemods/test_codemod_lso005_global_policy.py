"""LSO005: experimental.global_policy -> global_policy."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_rewrites(target):
    assert_rewrites(
        "import tensorflow as tf\np = tf.keras.mixed_precision.experimental.global_policy()\n",
        "import tensorflow as tf\np = tf.keras.mixed_precision.global_policy()\n",
        target,
    )


def test_noop_for_a_method_of_the_same_name():
    assert_unchanged("p = self.mixed_precision.experimental.global_policy()\n")
