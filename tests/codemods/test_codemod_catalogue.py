"""The table's examples are what the codemod does, and docs/rules.md is generated from them."""

from pathlib import Path

import pytest

from codemods import table
from codemods.apply.engine import migrate
from codemods.io import catalogue

CASES = [
    pytest.param(rule, target, id=f"{rule.code}-{target}")
    for rule in table.RULES
    for target in table.TARGETS
]


@pytest.mark.parametrize(("rule", "target"), CASES)
def test_example(rule, target):
    result = migrate(rule.example, target)
    expected = rule.example_after.get(target)
    if expected is None:
        assert result.text == rule.example
        assert rule.code in {f.code for f in result.findings if not f.fixed}
    else:
        assert result.text == expected
        if rule.action[target] == "safe":
            assert rule.code in {f.code for f in result.findings if f.fixed}


def test_docs_rules_md_is_generated_from_the_table():
    path = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert path.read_text(encoding="utf-8") == catalogue.render(), (
        "run: python -m codemods.io.catalogue > docs/rules.md"
    )
