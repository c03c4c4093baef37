"""LSO009: the graph-mode MixedPrecisionLossScaleOptimizer moves to tf.compat.v1.

tf.train.experimental.MixedPrecisionLossScaleOptimizer ->
tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._rename import rename

CODE = "LSO009"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    rename(context, node, CODE, table.new_home(qualified, context.target), qualified)
