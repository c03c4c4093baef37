"""The rule catalogue, rendered from `codemods.table`.

`python -m codemods.catalogue > docs/rules.md` writes it; the docs build runs the same code.

Every example in the table is also a test case (tests/codemods/test_codemod_catalogue.py), so the
catalogue cannot drift from what the codemod does.
"""

from __future__ import annotations

import difflib
import sys

from codemods import table


def render() -> str:
    lines = [
        "# compat-lso-migrate rule catalogue",
        "",
        "Generated from `codemods/table.py` by `python -m codemods.catalogue > docs/rules.md`; do "
        "not edit by hand.",
        "`safe`: rewritten; `manual`: reported with the instruction below, code left as is; "
        "`none`: nothing to do there.",
        "",
        "| code | name | " + " | ".join(table.TARGETS) + " | summary |",
        "| --- | --- | " + " | ".join("---" for _ in table.TARGETS) + " | --- |",
    ]
    for rule in table.RULES:
        actions = " | ".join(rule.action[t] for t in table.TARGETS)
        lines.append(
            f"| {rule.code} | {rule.name} | {actions} | {rule.summary.replace('|', '/')} |"
        )
    for rule in table.RULES:
        lines += ["", f"## {rule.code} {rule.name}", "", rule.summary + ".", ""]
        if rule.note:
            lines += [rule.note, ""]
        lines += [f"Manual instruction, where reported: {rule.instruction}.", ""]
        for target, instruction in rule.instructions.items():
            lines += [f"On `--target {target}` instead: {instruction}.", ""]
        for target in table.TARGETS:
            after = rule.example_after.get(target)
            lines.append(f"`--target {target}` ({rule.action[target]}):")
            lines.append("")
            if after is None:
                lines += [
                    "```python",
                    rule.example.rstrip("\n"),
                    "```",
                    "",
                    f"This example is left as written and reported as {rule.code}.",
                    "",
                ]
                continue
            diff = difflib.unified_diff(
                rule.example.splitlines(), after.splitlines(), "before", "after", lineterm=""
            )
            body = list(diff)[2:] or [f" {line}" for line in rule.example.splitlines()]
            lines += ["```diff", *body, "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
