"""LSO002: isinstance/issubclass against the experimental class -> the new class."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged

OLD = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"


@pytest.mark.parametrize(
    ("before", "after", "target"),
    [
        pytest.param(
            f"import tensorflow as tf\nok = isinstance(opt, {OLD})\n",
            "import tensorflow as tf\n"
            "ok = isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)\n",
            "keras2",
            id="isinstance",
        ),
        pytest.param(
            f"import tensorflow as tf\nok = issubclass(cls, {OLD})\n",
            "import tensorflow as tf\n"
            "ok = issubclass(cls, tf.keras.mixed_precision.LossScaleOptimizer)\n",
            "keras3",
            id="issubclass",
        ),
        pytest.param(
            f"import tensorflow as tf\n"
            f"ok = isinstance(opt, (tf.keras.optimizers.Optimizer, {OLD}))\n",
            "import tensorflow as tf\n"
            "ok = isinstance(opt, (tf.keras.optimizers.Optimizer, "
            "tf.keras.mixed_precision.LossScaleOptimizer))\n",
            "keras2",
            id="tuple-of-classes",
        ),
        pytest.param(
            f"import tensorflow as tf\nok = isinstance(opt, {OLD})\n",
            "import compat_lso\nok = isinstance(opt, compat_lso.LossScaleOptimizer)\n",
            "shim",
            id="shim-checks-the-shim-class",
        ),
    ],
)
def test_rewrites(before, after, target):
    assert_rewrites(before, after, target)


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            f"import tensorflow as tf\ndef isinstance(a, b):\n    return True\n"
            f"ok = isinstance(opt, {OLD})\n",
            id="isinstance-shadowed-by-a-local-function-leaves-a-reference-report-only",
        ),
    ],
)
def test_shadowed_isinstance_is_not_treated_as_the_builtin(before):
    from tests.codemods.codemod_cases import rewrite

    _, findings = rewrite(before, "keras2")
    assert [f.code for f in findings] == ["LSO003"]


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            "class LossScaleOptimizer:\n    pass\nok = isinstance(opt, LossScaleOptimizer)\n",
            id="local-class",
        ),
        pytest.param(
            "import tensorflow as tf\n"
            "ok = isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)\n",
            id="new-class",
        ),
    ],
)
def test_noop(before):
    assert_unchanged(before)
