"""Whole files: fixtures/NAME.before.py migrates to fixtures/NAME.TARGET.py, and stays there."""

from pathlib import Path
from typing import cast

import pytest

from codemods.apply.engine import migrate
from codemods.table import Target

FIXTURES = Path(__file__).parent / "fixtures"
PAIRS = [
    pytest.param(before, expected, id=expected.name)
    for before in sorted(FIXTURES.glob("*.before.py"))
    for expected in sorted(FIXTURES.glob(before.name.replace(".before.py", ".*.py")))
    if expected != before
]


def test_every_fixture_has_all_three_targets():
    assert len(PAIRS) == 3 * len(list(FIXTURES.glob("*.before.py"))) > 0


@pytest.mark.parametrize(("before", "expected"), PAIRS)
def test_fixture(before: Path, expected: Path):
    target = cast(Target, expected.name.split(".")[-2])  # NAME.TARGET.py
    result = migrate(before.read_text(encoding="utf-8"), target)
    assert result.text == expected.read_text(encoding="utf-8")
    assert migrate(result.text, target).text == result.text, "a second run must change nothing"
