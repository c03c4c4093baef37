"""LSO003: the experimental class used other than by calling it or in an isinstance check.

Subclassing it or passing it around keeps the old constructor signature in play, so only the shim,
which keeps that signature as `compat_lso.experimental.LossScaleOptimizer`, can take it over safely.
Elsewhere the subclass is reported, with what its body reads that Keras 3's class lacks on keras3
(`self._optimizer`, Keras 3's `inner_optimizer`: AttributeError once the base is ported), and so is
each call that builds it with the old constructor, through any name: a class named
LossScaleOptimizer shadows TensorFlow's, and its calls follow the user's class
(codemods/rules/_subclass.py).
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules import _subclass
from codemods.rules._rename import rename, short
from codemods.rules._tf24 import parent

CODE = "LSO003"
# The name is the class LSO001 rewrites calls of; what is left of it comes here.
NAME_CODE = "LSO001"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    new = f"{table.SHIM_EXPERIMENTAL}.LossScaleOptimizer" if context.target == "shim" else None
    cls = parent(context, node)
    reads = (
        _subclass.keras2_reads(cls)
        if isinstance(cls, ast.ClassDef) and node in cls.bases and context.target == "keras3"
        else []
    )
    if not reads or not context.wants(CODE, node):
        rename(context, node, CODE, new, qualified)
        return
    context.report(
        CODE,
        node,
        f"{short(qualified)} has no safe rewrite on --target keras3",
        reason="no-equivalent",
        help=_subclass.help_for(reads),
    )


def on_module(context: Context) -> None:
    if context.target == "shim":
        return  # compat_lso.experimental.LossScaleOptimizer keeps (optimizer, loss_scale)
    for call, derived in _subclass.constructions(context):
        if derived.base not in table.OLD_LSO or derived.own_init:
            continue
        if not (call.args or call.keywords) or not context.wants(CODE, call):
            continue
        context.report(
            CODE,
            call,
            f"{context.source.segment(call.func)}(...) builds {derived.cls.name} (line "
            f"{derived.cls.lineno}) with the experimental class's (optimizer, loss_scale)",
            reason="no-equivalent",
        )
