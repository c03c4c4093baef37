"""LSO006: experimental.Policy -> Policy; a loss_scale argument has no home on the new Policy."""

from __future__ import annotations

import ast

from codemods import table
from codemods.context import Context
from codemods.rules._rename import rename

CODE = "LSO006"


def on_call(context: Context, call: ast.Call) -> bool:
    qualified = context.qualified(call.func)
    if qualified is None or table.classify(qualified) != (CODE, "Policy"):
        return False
    if (
        len(call.args) > 1
        or any(k.arg in ("loss_scale", None) for k in call.keywords)
        or any(isinstance(a, ast.Starred) for a in call.args)
    ):
        if context.wants(CODE, call):
            context.report(
                CODE,
                call,
                "Policy(..., loss_scale=...): the loss scale has no home on the new Policy",
            )
        context.claim(call.func)
        return True
    return False  # a plain Policy(name) is a rename, done when the reference is visited


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    rename(context, node, CODE, table.new_home(qualified, context.target), qualified)
