"""LSO003: other uses of the experimental class (subclassing, passing it around)."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes

BEFORE = (
    "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
    "class Scaled(mixed_precision.LossScaleOptimizer):\n    pass\n"
)


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_subclass_is_reported_not_rewritten(target):
    findings = assert_unchanged(BEFORE, target)
    # The import the subclass keeps fails on import: the sweep reports it too (LSO101).
    assert manual_codes(findings) == ["LSO101", "LSO003"]
    assert findings[1].line == 2 and findings[1].col == 14


def test_shim_keeps_the_old_signature_on_compat_lso_experimental():
    assert_rewrites(
        BEFORE,
        "import compat_lso\nclass Scaled(compat_lso.experimental.LossScaleOptimizer):\n    pass\n",
        "shim",
    )


def test_noop_for_the_new_class():
    assert_unchanged(
        "from tensorflow.keras import mixed_precision\n"
        "class S(mixed_precision.LossScaleOptimizer):\n    pass\n"
    )
