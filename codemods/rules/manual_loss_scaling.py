"""LSO011: get_scaled_loss / get_unscaled_gradients do not exist in Keras 3 (reported there)."""

from __future__ import annotations

import ast

from codemods.context import Context

CODE = "LSO011"
METHODS = frozenset({"get_scaled_loss", "get_unscaled_gradients"})


def on_call(context: Context, call: ast.Call) -> bool:
    # The receiver is usually `self.optimizer` in a train_step, which no static analysis can type:
    # the method names are unique to the loss scale optimizer, so any call of them is reported.
    if not (isinstance(call.func, ast.Attribute) and call.func.attr in METHODS):
        return False
    if context.wants(CODE, call):
        context.report(CODE, call, f"{call.func.attr}() has no Keras 3 equivalent")
    return True
