"""LSO010: `opt.loss_scale()` (TF 2.1-2.3, a LossScale object) -> `opt.loss_scale` (a tensor).

Only where `opt` is, in that scope, last bound to a LossScaleOptimizer call: `loss_scale()` on
anything else may be the user's own method.
"""

from __future__ import annotations

import ast

from codemods.context import Context

CODE = "LSO010"


def on_call(context: Context, call: ast.Call) -> bool:
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "loss_scale"
        and not call.args
        and not call.keywords
    ):
        return False
    if not (isinstance(func.value, ast.Name) and context.names.is_loss_scale_optimizer(func.value)):
        return False
    if not context.wants(CODE, call):
        return True
    if not context.safe(CODE):
        context.report(CODE, call, f"{func.value.id}.loss_scale() has no Keras 3 equivalent")
        return True
    receiver = context.source.segment(func.value)
    context.fix(
        CODE,
        call,
        f"{receiver}.loss_scale() -> {receiver}.loss_scale",
        [context.edit(call, context.source.segment(func))],
        consumes=set(),
    )
    return True
