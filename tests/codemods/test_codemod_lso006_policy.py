"""LSO006: experimental.Policy(name) -> Policy(name); loss_scale= is reported."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_rewrites_plain_policy(target):
    assert_rewrites(
        "from tensorflow.keras.mixed_precision import experimental as mp\n"
        "p = mp.Policy('mixed_float16')\n",
        "from tensorflow.keras import mixed_precision as mp\np = mp.Policy('mixed_float16')\n",
        target,
    )


@pytest.mark.parametrize(
    "call", ["mp.Policy('mixed_float16', loss_scale='dynamic')", "mp.Policy('mixed_float16', 128)"]
)
def test_loss_scale_is_reported(call):
    findings = assert_unchanged(
        f"from tensorflow.keras.mixed_precision import experimental as mp\np = {call}\n"
    )
    # The import kept for it fails on import: the sweep reports it too (LSO101).
    assert manual_codes(findings) == ["LSO101", "LSO006"]
    assert "no home" in findings[1].message


def test_noop_for_new_policy():
    assert_unchanged(
        "from tensorflow.keras import mixed_precision as mp\np = mp.Policy('mixed_float16')\n"
    )
