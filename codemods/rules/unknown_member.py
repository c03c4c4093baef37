"""LSO012: a member (or bare use) of a removed experimental namespace that no rule knows."""

from __future__ import annotations

import ast

from codemods.meaning.module import Context
from codemods.rules._rename import short

CODE = "LSO012"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    if context.wants(CODE, node):
        context.report(CODE, node, f"{short(qualified)} was removed", reason="no-equivalent")
    context.claim(node)
