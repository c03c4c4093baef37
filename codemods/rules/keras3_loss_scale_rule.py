"""LSO022: a note, on --target keras3, at each loss scale optimizer of TF 2.4-2.15 (or
experimental) code: after the migration Keras 3's class runs it, whose dynamic rule differs by
design. Said once per optimizer here rather than in every other rule's message."""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._tf24 import bind, evidence
from codemods.rules.gradient_scaling import constructions
from codemods.rules.loss_scale_optimizer_call import Untranslatable, arguments, translate

CODE = "LSO022"


def on_module(context: Context) -> None:
    if context.target != "keras3" or evidence(context).keras3_code:
        return
    for call in constructions(context):
        qualified = context.qualified(call.func)
        if qualified in table.KERAS3_ONLY_LSO or qualified == table.SHIM_LSO:
            continue
        if _fixed(context, call, qualified):
            continue  # LSO001/LSO015 make it the inner optimizer's loss_scale_factor, or report it
        if context.wants(CODE, call) and not context.suppresses(call):  # any code's comment
            context.note(
                CODE,
                call,
                "Keras 3's dynamic loss scale: no floor at 1, doubling unchecked, skipped steps "
                "not in `iterations`",
            )


def _fixed(context: Context, call: ast.Call, qualified: str | None) -> bool:
    """A fixed scale as written: no Keras 3 LossScaleOptimizer, so no dynamic rule, runs it."""
    if qualified in table.OLD_LSO:  # experimental: a number, FixedLossScale(N) (LSO001's reading)
        try:
            return ("dynamic", "False") in translate(context, arguments(call)[1]).keywords
        except Untranslatable:
            return False  # only known at run time: LSO001 reports it, the note stays
    dynamic = bind(call).arguments.get("dynamic")
    if isinstance(dynamic, ast.keyword):
        dynamic = dynamic.value
    return isinstance(dynamic, ast.Constant) and dynamic.value is False
