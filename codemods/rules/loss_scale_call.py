"""LSO010: `opt.loss_scale()` (TF 2.1-2.3, a LossScale object) -> `opt.loss_scale` (a tensor).

Where `opt` may hold a LossScaleOptimizer made in the module (codemods/meaning/instances.py
follows it through returns, tuples, attributes, containers and parameters); or where LSO019
knows the receiver as one (the file calls get_scaled_loss on it, or it is `model.optimizer` or a
name bound to it in a mixed-precision file that makes a loss scale optimizer, which compile()
gets). On any other `x.optimizer` in a mixed-precision file (compile()'s wrapper, of a class the
file does not name) the call, which fails on every class since TF 2.4, is reported, and so it is
on what the codemod cannot type in a module that makes one. `loss_scale()` on anything else may
be the user's own method.
"""

from __future__ import annotations

import ast

from codemods.meaning.module import Context
from codemods.rules import keras2_surface
from codemods.rules._tf24 import instances

CODE = "LSO010"
SPELLED = frozenset({"loss_scale"})  # the calls it looks at: `x.loss_scale()` (the registry)


def on_call(context: Context, call: ast.Call) -> bool:
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "loss_scale"
        and not call.args
        and not call.keywords
    ):
        return False
    held = instances(context).typed(func.value)
    typed = held.made
    kind = None if typed else keras2_surface.receiver_kind(context, func)
    untyped = kind is None and instances(context).untyped_may_be_one(func.value, held)
    if not typed and kind is None and not untyped:
        return False
    if not context.wants(CODE, call):
        return True
    receiver = context.source.segment(func.value)
    if untyped:
        context.report(
            CODE,
            call,
            f"{receiver}.loss_scale(): TF 2.1-2.3's call, if {receiver} is a loss scale "
            f"optimizer (since TF 2.4 a tensor: {receiver}.loss_scale)",
            reason="run-time",
        )
        return True
    if kind == "compiled" and not keras2_surface.constructs_one(context):
        context.report(
            CODE,
            call,
            f"{receiver}.loss_scale(): TF 2.1-2.3's call; since TF 2.4 loss_scale is a tensor "
            f"({receiver}.loss_scale), and compile()'s wrapper here may be Keras 3's own class",
            reason="run-time",
        )
        return True
    if not context.safe(CODE):
        context.report(
            CODE, call, f"{receiver}.loss_scale() has no Keras 3 equivalent", reason="no-equivalent"
        )
        return True
    context.fix(
        CODE,
        call,
        f"{receiver}.loss_scale() -> {receiver}.loss_scale",
        [context.edit(call, context.source.segment(func))],
        consumes=set(),
    )
    return True
