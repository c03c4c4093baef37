"""LSO011: get_scaled_loss / get_unscaled_gradients: reported on keras3 only."""

import pytest

from tests.codemods.codemod_cases import assert_unchanged, manual_codes

CODE = (
    "scaled = self.optimizer.get_scaled_loss(loss)\n"
    "grads = self.optimizer.get_unscaled_gradients(grads)\n"
)


def test_keras3_reports_both():
    assert manual_codes(assert_unchanged(CODE, "keras3")) == ["LSO011", "LSO011"]


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_them(target):
    assert not assert_unchanged(CODE, target)
