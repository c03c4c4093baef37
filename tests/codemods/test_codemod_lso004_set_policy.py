"""LSO004: set_policy -> set_global_policy."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "import tensorflow as tf\n"
            "tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n",
            "import tensorflow as tf\n"
            "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
            id="attribute",
        ),
        pytest.param(
            "from tensorflow.keras.mixed_precision.experimental import set_policy\n"
            "set_policy('mixed_float16')\n",
            "from tensorflow.keras.mixed_precision import set_global_policy\n"
            "set_global_policy('mixed_float16')\n",
            id="imported-by-name-renames-the-uses",
        ),
        pytest.param(
            "from tensorflow.keras.mixed_precision.experimental import set_policy as sp\n"
            "sp('mixed_float16')\n",
            "from tensorflow.keras.mixed_precision import set_global_policy as sp\n"
            "sp('mixed_float16')\n",
            id="imported-under-an-alias-keeps-the-alias",
        ),
        pytest.param(
            "from keras.mixed_precision import experimental as mixed_precision\n"
            "mixed_precision.set_policy('float32')\n",
            "from keras import mixed_precision\nmixed_precision.set_global_policy('float32')\n",
            id="standalone-keras",
        ),
    ],
)
@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_rewrites(before, after, target):
    if target == "shim" and "mixed_float16" in before:
        # compile() under that policy, here or elsewhere, must wrap as TF 2.15 did: the shim
        # target adds compat_lso.install() after the imports (LSO023).
        first, rest = after.split("\n", 1)
        after = f"import compat_lso\n{first}\n\ncompat_lso.install()\n{rest}"
    assert_rewrites(before, after, target)


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            "def set_policy(x):\n    pass\nset_policy('mixed_float16')\n", id="local-function"
        ),
        pytest.param(
            "import tensorflow as tf\n"
            "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
            id="already-new",
        ),
    ],
)
def test_noop(before):
    assert_unchanged(before)


def test_names_from_one_module_share_one_import():
    assert_rewrites(
        "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer, set_policy, "
        "DynamicLossScale\nset_policy('mixed_float16')\n"
        "opt = LossScaleOptimizer(opt, DynamicLossScale(increment_period=10))\n",
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer, set_global_policy\n"
        "set_global_policy('mixed_float16')\n"
        "opt = LossScaleOptimizer(opt, dynamic_growth_steps=10)\n",
    )
