"""The rule catalogue, rendered from `codemods.table`.

`python -m codemods.io.catalogue > docs/rules.md` writes it; the docs build runs the same code.

Every example in the table is also a test case (tests/codemods/test_codemod_catalogue.py), so the
catalogue cannot drift from what the codemod does.
"""

from __future__ import annotations

import difflib
import sys

from codemods import table


def _markdown(text: str) -> str:
    """Plain text for a Markdown page: `*` and `|` would otherwise be emphasis or a cell border."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("|", "\\|")


def what_happens(rule: table.Rule, target: table.Target) -> str:
    """What the codemod does with the rule's matches on `target`, in words.

    A `safe` rule rewrites only some forms on the targets in `rule.partly` (LSO001 on keras3: not
    a fixed scale), or where its own example is left as written, and reports the others.
    """
    action = rule.action[target]
    if action == "manual":
        return "reported"
    if action == "none":
        return "nothing to do"
    if action == "note":
        return "noted, unchanged"
    if target in rule.partly or rule.example_after.get(target) is None:
        return "rewritten or reported"
    return "rewritten"


# Said once here (and in the catalogue's introduction), not in every finding that sits in such a
# branch: those only end with " (branch of `<the gate>`, line N)" (or `else branch of`, ...).
GATED = (
    "A finding that ends with (branch of `<the gate>`, line N), or `else branch of`, `try "
    "branch of`, `except branch of`, sits under a version gate or a feature detection: if no "
    "TensorFlow you support runs that branch, delete it, or keep it and suppress the line with "
    "`# compat-lso: ignore[{code}]`. One that ends with (branch of line N, dead on TF >= 2.12: "
    "kept as written) is a note: the gate reads TensorFlow's version, and no supported "
    "TensorFlow runs that branch (--explain LSO104). One that ends with (branch of flag "
    "`use_experimental_api`, line N) sits under a flag your code or its caller sets (a "
    "parameter, a True/False, a setting), not TensorFlow's version: that branch runs whenever "
    "the flag is on, so migrate it like any other code, or remove the flag with it."
)


def explain(code: str) -> str:
    """`compat-lso-migrate --explain CODE`: the rule's whole text, which findings only point to."""
    rule = table.RULES_BY_CODE[code]
    lines = [f"{rule.code} {rule.name}: {rule.summary}.", ""]
    lines += [f"  --target {t}: {what_happens(rule, t)}" for t in table.TARGETS]
    if rule.note:
        lines += ["", rule.note]
    lines += ["", f"help: {rule.instruction}"]
    lines += [f"help on --target {t}: {text}" for t, text in rule.instructions.items()]
    if rule.details:
        lines += ["", rule.details]
    lines += ["", GATED.format(code=rule.code)]
    lines += ["", f"Examples: {rule.docs}"]
    return "\n".join(lines)


def render() -> str:
    lines = [
        "# compat-lso-migrate rule catalogue",
        "",
        "Generated from `codemods/table/` by `python -m codemods.io.catalogue > docs/rules.md`; do "
        "not edit by hand.",
        "Per `--target`: *rewritten*; *rewritten or reported* (the forms the rule's note names are "
        "rewritten, the others reported; its examples below show each target); *reported* (left "
        "as is, with the instruction below); *noted, unchanged* (a note: nothing to change, but "
        "printed, and counted apart from findings); *nothing to do*.",
        "",
        "A finding is two short lines: the fact at its line, and the fix on a `help:` line "
        "(the rule's help below, or one naming the code at that line); what follows each rule's "
        "help here is the reasoning, which findings leave out. "
        + GATED.format(code="CODE").replace("A finding", "One"),
        "",
        "| rule | " + " | ".join(table.TARGETS) + " | summary |",
        "| --- | " + " | ".join("---" for _ in table.TARGETS) + " | --- |",
    ]
    for rule in table.RULES:
        actions = " | ".join(what_happens(rule, t) for t in table.TARGETS)
        lines.append(
            f"| [{rule.code}](#{rule.code.lower()}-{rule.name}) | {actions} | "
            f"{_markdown(rule.summary)} |"
        )
    for rule in table.RULES:
        if rule is table.SWEEP_RULES[0]:
            lines += ["", "## The sweep", "", table.SWEEP_INTRO]
        lines += ["", f"## {rule.code} {rule.name}", "", _markdown(rule.summary) + ".", ""]
        if rule.note:
            lines += [_markdown(rule.note), ""]
        lines += [f"`help:` where reported: {_markdown(rule.instruction)}.", ""]
        for target, instruction in rule.instructions.items():
            lines += [f"On `--target {target}` instead: {_markdown(instruction)}.", ""]
        if rule.details:
            lines += [_markdown(rule.details), ""]
        for target in table.TARGETS:
            after = rule.example_after.get(target)
            lines.append(f"`--target {target}` ({what_happens(rule, target)}):")
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
