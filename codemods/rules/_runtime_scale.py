"""LSO001 on keras2: a loss_scale only known at run time, converted at run time.

TF 2.4's experimental class took a number (a fixed scale), 'dynamic', or a LossScale object.
Keras 2's class takes the first two as `dynamic=` and `initial_scale=`, so

    LossScaleOptimizer(opt, loss_scale)  ->
    LossScaleOptimizer(opt, dynamic=loss_scale == "dynamic",
                       initial_scale=None if loss_scale == "dynamic" else loss_scale)

keeps every number and 'dynamic' (`initial_scale=None` with `dynamic=True` is the default scale,
as 'dynamic' was). The value is read twice, so it must be a name or an attribute of one
(`FLAGS.loss_scale`), never a call. A LossScale object has no such spelling: the rewrite is made
only in a module that builds none (LSO007's classes) and where no value the module shows reaching
it can be one (codemods/meaning/loss_scale_sources.py: not a LossScale subclass imported from
another module, `x = RevisedDynamicLossScale()`, nor another module's function's result); what
the module cannot see (a parameter no call here fills, a flag) is converted, and its help says
that an object now fails there (Keras 2: TypeError at the call).

keras3 has no fixed LossScaleOptimizer: a number is the inner optimizer's `loss_scale_factor`
(codemods/rules/_fixed_scale.py, exact only where that optimizer is built in the call and the
result goes only to compile() or the methods both classes share). There, and only there,

    LossScaleOptimizer(Adam(lr), loss_scale)  ->
    (LossScaleOptimizer(Adam(lr)) if loss_scale == "dynamic"
     else Adam(lr, loss_scale_factor=loss_scale))

keeps 'dynamic' (on Keras 3's dynamic rule, which LSO022 notes at the line) and every number (the
same fixed scaling); one branch runs, so the optimizer's arguments are evaluated once. Elsewhere
the finding says which of the two conditions fails.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.loss_scale_sources import Source, object_source
from codemods.meaning.module import Context
from codemods.rules import _fixed_scale
from codemods.rules._rename import arrow, short

CODE = "LSO001"
HELP = (
    "nothing to change if the loss scale is 'dynamic' or a number; a LossScale object is no "
    "longer accepted there"
)


def keywords(context: Context, value: ast.expr) -> list[tuple[str, str]] | None:
    """The keywords that convert `value` at run time, or None where that is not exact."""
    if context.target != "keras2" or not _plain(value) or _builds_loss_scales(context):
        return None
    if object_source(context, value) is not None:
        return None
    quote = _free_quote(context, value)
    if quote is None:
        return None
    text = context.source.segment(value)
    dynamic = f"{text} == {quote}dynamic{quote}"
    return [("dynamic", dynamic), ("initial_scale", f"None if {dynamic} else {text}")]


KERAS3_HELP = (
    "'dynamic' now runs Keras 3's dynamic rule (LSO022); a number, the same fixed scaling; a "
    "LossScale object fails"
)


def keras3(
    context: Context, call: ast.Call, qualified: str, inner: ast.expr, value: ast.expr
) -> str | None:
    """keras3: 'dynamic' or a number chosen where the code runs; None when rewritten, else what
    the finding adds (why a number has no spelling here)."""
    quote = _free_quote(context, value)
    if not _plain(value) or _builds_loss_scales(context) or quote is None:
        return ""
    source = context.source
    text = source.segment(value)
    fixed = _fixed_scale.rewrite(context, call, inner, text)
    if isinstance(fixed, str):
        # Why a number has no spelling here, said short (--explain LSO001 says it in full).
        return "; " + fixed.removeprefix("the inner optimizer ").replace(" is not ", " not ")
    new = table.new_home(qualified, "keras3")
    spelled = context.spell(call.func, new) if new else None
    if new is None or spelled is None:
        return ""
    dynamic = f"{spelled.text}({source.segment(inner)})"
    written = f"({dynamic} if {text} == {quote}dynamic{quote} else {fixed.text})"
    for node in ast.walk(call):
        context.claim(node)  # rewritten as a whole
    context.fix(
        CODE,
        call,
        arrow(qualified, new, new_suffix=f"(...) or loss_scale_factor, from {text}"),
        [context.edit(call, written), *fixed.edits[1:]],
        consumes=context.loads_in(call.func),
        spellings=[spelled],
        manual=short(qualified),
        help=KERAS3_HELP,
    )
    return None


def may_be_an_object(context: Context, value: ast.expr) -> Source | None:
    """Where a value the module shows reaching `value` may be a LossScale object
    (codemods/meaning/loss_scale_sources.py), else None (also where the module builds TF's
    LossScale objects: LSO001's own reason then says why)."""
    if not _plain(value) or _builds_loss_scales(context):
        return None
    return object_source(context, value)


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
