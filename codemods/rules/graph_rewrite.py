"""LSO008: enable_mixed_precision_graph_rewrite left the TF2 API; there is nothing to rewrite to."""

from __future__ import annotations

import ast

from codemods.context import Context
from codemods.rules._rename import short

CODE = "LSO008"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    if context.wants(CODE, node):
        context.report(CODE, node, f"{short(qualified)} was removed")
    context.claim(node)
