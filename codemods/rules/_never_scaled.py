"""LSO011 where get_unscaled_gradients divides gradients of a loss that was never scaled.

The old code's own bug: on TF 2.15 too it trains at gradients / loss scale. Whatever the target,
the call says so (keras3: reported, as the call must change there; keras2 and shim: a note), with
both choices on the help line: keep today's numbers, or fix them. The audit's `unscaled-twice`
says the same at run time. Only where the gradient flow (codemods/meaning/gradients.py) sees the
unscaled loss: never a guess.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.gradients import GradientFlow
from codemods.meaning.module import Context

CODE = "LSO011"


def _unscaled_loss(context: Context, unscale: ast.Call) -> tuple[str, int] | None:
    """The never-scaled loss `unscale` divides the gradients of, and the line they are taken."""
    if not unscale.args:
        return None
    path = GradientFlow(context).gradients(unscale.args[0])
    if path.verdict != "unscaled-loss" or not path.losses:
        return None
    return context.source.segment(path.losses[0]), path.sources[0].lineno


def say(context: Context, unscale: ast.Call, receiver: str) -> bool:
    """The finding at `unscale` (a get_unscaled_gradients with no get_scaled_loss on its receiver
    in its function) where it divides gradients of a loss never scaled; whether it was made."""
    found = _unscaled_loss(context, unscale)
    if found is None:
        return False
    loss, line = found
    fact = table.NEVER_SCALED_FACT.format(receiver=receiver, loss=loss, line=line)
    help = table.NEVER_SCALED_HELP[context.target]
    if context.target == "keras3":
        context.report(CODE, unscale, fact, reason="choice", help=help)
    else:
        context.note(CODE, unscale, fact, help=help)
    return True
