"""LSO007: the LossScale classes move to tf.compat.v1.mixed_precision.

On --target shim they move to compat_lso.experimental instead.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._rename import rename

CODE = "LSO007"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    rename(context, node, CODE, table.new_home(qualified, context.target), qualified)
