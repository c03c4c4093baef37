"""LSO008: enable_mixed_precision_graph_rewrite left the TF2 API; there is nothing to rewrite to.
Its disable_ counterpart went with it."""

from __future__ import annotations

import ast

from codemods.meaning.module import Context
from codemods.rules._rename import short

CODE = "LSO008"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    if not context.wants(CODE, node):
        context.claim(node)
    elif qualified.endswith(".disable_mixed_precision_graph_rewrite"):
        context.claim(node)
        context.manual(
            node,
            CODE,
            f"{short(qualified)} was removed: with the graph rewrite gone there is nothing to "
            "turn off; delete the call (a mixed_float16 policy is turned off with "
            "tf.keras.mixed_precision.set_global_policy('float32'))",
        )
    else:
        context.report(CODE, node, f"{short(qualified)} was removed")
