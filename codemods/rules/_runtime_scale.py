"""LSO001 on keras2: a loss_scale only known at run time, converted at run time.

TF 2.4's experimental class took a number (a fixed scale), 'dynamic', or a LossScale object.
Keras 2's class takes the first two as `dynamic=` and `initial_scale=`, so

    LossScaleOptimizer(opt, loss_scale)  ->
    LossScaleOptimizer(opt, dynamic=loss_scale == "dynamic",
                       initial_scale=None if loss_scale == "dynamic" else loss_scale)

keeps every number and 'dynamic' (`initial_scale=None` with `dynamic=True` is the default scale,
as 'dynamic' was). The value is read twice, so it must be a name or an attribute of one
(`FLAGS.loss_scale`), never a call. A LossScale object has no such spelling: the rewrite is made
only in a module that builds none (LSO007's classes), and its help says that one now fails.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._rename import arrow

CODE = "LSO001"
HELP = (
    "nothing to change if the loss scale is 'dynamic' or a number; a LossScale object is no "
    "longer accepted there"
)


def keywords(context: Context, value: ast.expr) -> list[tuple[str, str]] | None:
    """The keywords that convert `value` at run time, or None where that is not exact."""
    if context.target != "keras2" or not _plain(value) or _builds_loss_scales(context):
        return None
    quote = _free_quote(context, value)
    if quote is None:
        return None
    text = context.source.segment(value)
    dynamic = f"{text} == {quote}dynamic{quote}"
    return [("dynamic", dynamic), ("initial_scale", f"None if {dynamic} else {text}")]


def _free_quote(context: Context, value: ast.expr) -> str | None:
    """A quote the written 'dynamic' may use where `value` stands: inside an f-string, not the
    f-string's own (before Python 3.12 it ends the f-string); None where both are taken."""
    taken = set()
    where = (value.lineno, value.col_offset)
    for node in ast.walk(context.tree):
        if isinstance(node, ast.JoinedStr) and node.end_lineno is not None:
            inside = (node.lineno, node.col_offset) <= where
            if inside and where < (node.end_lineno, node.end_col_offset or 0):
                written = context.source.segment(node).lstrip("fFrRbBuU")
                taken.add(written[:1])
    return next((quote for quote in ('"', "'") if quote not in taken), None)


def message(qualified: str, new: str, value: str) -> str:
    return arrow(qualified, new, new_suffix=f"(..., dynamic=..., initial_scale=...) from {value}")


def _plain(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _builds_loss_scales(context: Context) -> bool:
    """Whether the module names a LossScale class (whose objects it may pass as loss_scale),
    other than as a loss scale optimizer's own `loss_scale` argument (`loss_scale=
    DynamicLossScale(...)`), which LSO001 rewrites away: a second run must find what the first
    found."""
    given = {
        id(argument.func)
        for call in context.names.calls
        if context.qualified(call.func) in table.OLD_LSO
        for argument in [
            *call.args[1:2],
            *(k.value for k in call.keywords if k.arg == "loss_scale"),
        ]
        if isinstance(argument, ast.Call)
    }
    for node in [*context.names.attributes, *context.names.loads]:
        if id(node) in given:
            continue
        qualified = context.qualified(node) or ""
        if (
            qualified.startswith(("tensorflow.", "keras."))
            and qualified.rsplit(".", 1)[-1] in table.LOSS_SCALE_CLASSES
        ):
            return True
    return False
