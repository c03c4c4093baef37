"""LSO007: the LossScale classes move to tf.compat.v1.mixed_precision (compat_lso.experimental on --target shim)."""

from __future__ import annotations

import ast

from codemods import table
from codemods.context import Context
from codemods.rules._rename import rename

CODE = "LSO007"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    rename(context, node, CODE, table.new_home(qualified, context.target), qualified)
