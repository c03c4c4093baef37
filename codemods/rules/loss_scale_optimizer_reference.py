"""LSO003: the experimental class used other than by calling it or in an isinstance check.

Subclassing it or passing it around keeps the old constructor signature in play, so only the shim,
which keeps that signature as `compat_lso.experimental.LossScaleOptimizer`, can take it over safely.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._rename import rename

CODE = "LSO003"
# The name is the class LSO001 rewrites calls of; what is left of it comes here.
NAME_CODE = "LSO001"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    new = f"{table.SHIM_EXPERIMENTAL}.LossScaleOptimizer" if context.target == "shim" else None
    rename(context, node, CODE, new, qualified)
