"""LSO022: a note, on --target keras3, at each loss scale optimizer of TF 2.4-2.15 (or
experimental) code: after the migration Keras 3's class runs it, whose dynamic rule differs by
design. Said once per optimizer here rather than in every other rule's message."""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._tf24 import bind, evidence
from codemods.rules.gradient_scaling import constructions

CODE = "LSO022"


def on_module(context: Context) -> None:
    if context.target != "keras3" or evidence(context).keras3_code:
        return
    for call in constructions(context):
        qualified = context.qualified(call.func)
        if qualified in table.KERAS3_ONLY_LSO or qualified == table.SHIM_LSO:
            continue
        dynamic = bind(call).arguments.get("dynamic")
        if isinstance(dynamic, ast.keyword):
            dynamic = dynamic.value
        if isinstance(dynamic, ast.Constant) and dynamic.value is False:
            continue  # a fixed scale: LSO015 makes it the inner optimizer's loss_scale_factor
        if context.wants(CODE, call) and not context.suppresses(call):  # any code's comment
            context.note(
                CODE,
                call,
                "Keras 3's dynamic loss scale: no floor at 1, doubling unchecked, skipped steps "
                "not in `iterations`",
            )
