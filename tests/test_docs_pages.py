"""What the docs show is what the code does: the home page's before/after, the rule catalogue."""

from __future__ import annotations

import re
from pathlib import Path

from codemods import table
from codemods.apply.engine import migrate
from codemods.io import catalogue

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_home_pages_before_and_after_is_the_codemods_output():
    page = (DOCS / "index.md").read_text(encoding="utf-8")
    [diff] = re.findall(r"```diff\n(.*?)```", page, flags=re.DOTALL)
    lines = diff.splitlines()
    before = "".join(line[1:] + "\n" for line in lines if not line.startswith("+"))
    after = "".join(line[1:] + "\n" for line in lines if not line.startswith("-"))
    result = migrate(before, "shim")
    assert result.text == after
    assert all(finding.fixed for finding in result.findings)


def test_the_catalogue_says_per_target_what_is_rewritten():
    rows = {
        line.split("]")[0].lstrip("| ["): line
        for line in catalogue.render().splitlines()
        if line.startswith("| [LSO")
    }
    assert set(rows) == {rule.code for rule in table.RULES}
    cells = [cell.strip() for cell in rows["LSO001"].split(" | ")]
    # keras2: a scale known only at run time is reported; keras3: a fixed scale too; shim: none.
    assert cells[1:4] == ["rewritten or reported", "rewritten or reported", "rewritten"]


def test_the_catalogue_escapes_markdown_in_summaries():
    page = catalogue.render()
    prose = re.sub(r"```.*?```|`[^`\n]*`", "", page, flags=re.DOTALL)  # code is left as is
    assert not re.search(r"(?<!\\)\*(?![a-z ,;]*\*)", prose.split("| --- |", 1)[1]), (
        "an unescaped * in the catalogue would start emphasis"
    )
    assert "tf.mixed_precision.experimental.\\*LossScale" in page
