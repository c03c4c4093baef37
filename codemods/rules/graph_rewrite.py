"""LSO008: enable_mixed_precision_graph_rewrite left the TF2 API, its disable_ counterpart with it.

--target shim rewrites both to compat_lso.experimental's, the functions `python -m compat_lso
run` gives the old names (TF 2.4-2.8's meaning for a Keras optimizer, TensorFlow's own TF1
function for a tf.compat.v1 one). keras2 and keras3 have no function that keeps the numbers for
both kinds of optimizer, and the call does not say which it is: reported.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._rename import rename, short

CODE = "LSO008"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    if not context.wants(CODE, node):
        context.claim(node)
    elif context.target == "shim":
        rename(context, node, CODE, table.new_home(qualified, context.target), qualified)
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
