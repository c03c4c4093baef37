"""LSO011 on --target shim: get_scaled_loss / get_unscaled_gradients are kept (compat_lso's class
has them), except where the receiver may be what compile() wrapped (manual_loss_scaling.py)."""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules import compile_loss_scale_optimizer
from codemods.rules._tf24 import parent

CODE = "LSO011"
METHODS = frozenset({"get_scaled_loss", "get_unscaled_gradients"})
_OWNERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)


def on_shim(context: Context, calls: list[ast.Call]) -> None:
    """--target shim keeps both methods: compat_lso's class has them. Keras 3's own class does
    not, and that is what compile() wraps a plain optimizer in under mixed_float16 unless
    compat_lso.install() ran. So `self.optimizer.get_scaled_loss(...)` (or `model.optimizer`) in
    a file that constructs no loss scale optimizer of its own is reported, once per function."""
    constructed = table.TF24_LSO | table.OLD_LSO | {table.SHIM_LSO, table.SHIM_EXPERIMENTAL_LSO}
    if compile_loss_scale_optimizer.wraps(context) or any(context.names.calls_to(constructed)):
        return  # most likely that one (or LSO023's), compat_lso's after this run
    reported: set[tuple[int, str]] = set()
    for call in calls:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if (
            _method(call) not in METHODS
            or not isinstance(receiver, ast.Attribute)
            or receiver.attr != "optimizer"
            or not context.wants(CODE, call)
        ):
            continue
        key = (id(_owner(context, call)), ast.dump(receiver))
        if key in reported:
            continue
        reported.add(key)
        name = context.source.segment(receiver)
        context.report(
            CODE,
            call,
            f"{name}.{_method(call)}() kept, but compile() may make {name} Keras 3's "
            "LossScaleOptimizer, which has no such method",
            reason="run-time",
        )


def _owner(context: Context, node: ast.AST) -> ast.AST:
    current: ast.AST | None = node
    while current is not None and not isinstance(current, _OWNERS):
        current = parent(context, current)
    return current if current is not None else context.tree


def _method(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""
