"""Shared by the rules that only move a name to its new home."""

from __future__ import annotations

import ast

from codemods import table
from codemods.context import Context


def rename(context: Context, node: ast.expr, code: str, new: str | None, old: str) -> None:
    """Rewrite a reference to `new` if the rule is safe here and the name can be written; else
    report it."""
    if not context.wants(code, node):
        context.claim(node)
        return
    spelled = context.spell(node, new) if new is not None and context.safe(code) else None
    if new is None or spelled is None:
        context.report(code, node, f"{short(old)} has no safe rewrite on --target {context.target}")
        return
    context.fix(
        code,
        node,
        f"{short(old)} -> {short(new)}",
        [context.edit(node, spelled.text)],
        consumes=context.loads_in(node),
        spellings=[spelled],
        manual=f"{short(old)}: {table.RULES_BY_CODE[code].instruction}",
    )


short = table.display
