"""LSO004: set_policy -> set_global_policy."""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._rename import rename

CODE = "LSO004"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    rename(context, node, CODE, table.new_home(qualified, context.target), qualified)
