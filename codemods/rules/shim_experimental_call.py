"""LSO013: compat_lso.experimental.LossScaleOptimizer(...) -> compat_lso.LossScaleOptimizer(...).

For code that first moved onto the shim's experimental class: the same translation as LSO001, onto
the shim's new-style class, which runs on every backend, so it is safe on every target. A loss
scale only known at run time stays on the experimental class, which keeps working: not reported.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context, delete_statement
from codemods.rules._rename import short
from codemods.rules.loss_scale_optimizer_call import (
    Untranslatable,
    argument_edits,
    arguments,
    translate,
)

CODE = "LSO013"


# The last part of every name `callee` accepts (the registry resolves no other attribute call).
CALLEE_ENDS = frozenset({table.SHIM_EXPERIMENTAL_LSO.rpartition(".")[2]})


def callee(qualified: str) -> bool:
    """The calls this rule looks at, by what the callee means (the registry dispatches on it)."""
    return qualified == table.SHIM_EXPERIMENTAL_LSO


def on_call(context: Context, call: ast.Call) -> bool:
    qualified = context.qualified(call.func)
    if qualified is None or not callee(qualified):
        return False
    context.claim(call.func)
    if not context.wants(CODE, call):
        return True
    try:
        optimizer, loss_scale = arguments(call)
        translation = translate(context, loss_scale)
    except Untranslatable:
        return True
    spelled = context.spell(call.func, table.SHIM_LSO)
    if spelled is None:
        return True  # cannot be written here; the experimental class keeps working
    edits = [
        context.edit(call.func, spelled.text),
        *argument_edits(context, call, optimizer, loss_scale, translation),
    ]
    if translation.followed is not None:
        edits.append(delete_statement(context, translation.followed))
    for translated in (loss_scale, translation.followed):
        for node in ast.walk(translated) if translated is not None else ():
            context.claim(node)
    described = ", ".join(f"{k}={v}" for k, v in translation.keywords) or "defaults"
    context.fix(
        CODE,
        call,
        f"{short(table.SHIM_EXPERIMENTAL_LSO)}(optimizer, loss_scale) -> "
        f"{short(table.SHIM_LSO)}(inner_optimizer, {described})",
        edits,
        consumes=context.loads_in(call.func) | translation.consumes,
        spellings=[spelled],
    )
    return True


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    context.claim(node)  # the class itself (isinstance, subclassing) keeps working: left alone
