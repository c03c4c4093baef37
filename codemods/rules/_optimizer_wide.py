"""LSO011 on keras3, optimizer-wide: where the unscaled gradients leave their function (returned
to a caller, kept by an accumulator and applied later), unscale explicitly there and scale back
at every apply_gradients of that optimizer.

_explicit_unscaling.py does this within one function. Its reason holds for the whole module:
Keras 3's `apply_gradients` divides by the scale, Keras 2's applies what it is given, and
`x * opt.scale_loss(1.0)` divided by that same scale is `x` again, exactly for a power-of-two
scale, whatever `x` is (unscaled gradients, their sum over steps, a clipped or an all-reduced
form, gradients of a loss never scaled). So once *every* apply_gradients of the optimizer in
its home (the class of `self.opt`, the function or module binding `opt`) scales back what it
gets, each applies what TF 2.15's did, and every `get_unscaled_gradients` can be written out
as TF 2.15 computed it. Accumulating stays TF 2.15's: the same unscaled values are summed.

What must hold, checked by codemods/meaning/gradient_reach.py from each unscaling call: the
unscaled gradients reach no apply_gradients but the optimizer's own, and nothing that could
take them out of the module. Else the findings stay, each with the per-function reason.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.gradient_reach import GradientReach
from codemods.meaning.module import Context
from codemods.rules._explicit_unscaling import (
    _ROUNDING_HELP,
    _each,
    _fresh,
    _not_power_of_two,
    _scale_back,
)
from codemods.rules._tf24 import constructions, parent, tensorflow_name
from codemods.source import Edit

CODE = "LSO011"
SCALE, UNSCALE = "get_scaled_loss", "get_unscaled_gradients"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# Keras 3's scale_loss reads `built` when traced: a tf.function traced before the first
# apply_gradients (which builds the optimizer), and not with it, multiplies by initial_scale for
# good, so the steps that overflow there differ from TF 2.15's (its gradients stay exact).
_TRACED = "traced before the first apply_gradients, this scale_loss() keeps initial_scale"
_TRACED_HELP = (
    "nothing if the tf.function that applies runs it; else first call opt.build(variables)"
)


def migrate(context: Context, calls: list[ast.Call]) -> tuple[str, bool]:
    """Rewrite `calls` (one receiver's scale/unscale calls, in one home) and every apply_gradients
    of that receiver there: ('', _) if done, else why not and whether that is the reason to
    report (False: what stops this rewrite stops the per-function one too, which says it)."""
    first = calls[0]
    assert isinstance(first.func, ast.Attribute)
    receiver = first.func.value
    text = context.source.segment(receiver)
    root = receiver
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return f"`{text}` is not a name or an attribute of one", False
    tf = tensorflow_name(context, root)
    if tf is None:
        return "no name for tensorflow reaches this function", False
    if not any(_method(call) == UNSCALE for call in calls):
        return f"no {text}.{UNSCALE}() here", False  # what is applied is not known unscaled
    for call in calls:
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            return f"the call at line {call.lineno} does not pass one argument", False
    home = _home(context, receiver)
    applies = [a for a in _applies(context, home, receiver) if id(a) not in context.applies_done]
    reach = GradientReach(context)
    for call in [c for c in calls if _method(c) == UNSCALE]:
        found = reach.of(call)
        if found.blocked:
            return found.blocked, True
        for apply in found.applies:
            if apply not in applies:
                where = f"`{context.source.segment(apply.func)}` (line {apply.lineno})"
                return f"the gradients unscaled at line {call.lineno} reach {where}", True
    for apply in applies:
        extra = [k.arg for k in apply.keywords if k.arg != "grads_and_vars"]
        if extra or len(apply.args) + len(apply.keywords) != 1:
            return (
                f"the apply_gradients at line {apply.lineno} passes "
                f"{', '.join(str(k) for k in extra) or 'a second argument'}, which Keras 3's "
                "does not take"
            ), True
    edits: list[Edit] = []
    scale = f"{text}.scale_loss(1.0)"
    for call in calls:
        assert isinstance(call.func, ast.Attribute)
        if _method(call) == SCALE:
            end = context.source.offset(call.func.end_lineno or 0, call.func.end_col_offset or 0)
            edits.append(Edit(end - len(SCALE), end, "scale_loss"))
        else:
            grad = _fresh(_function(context, call), "grad")
            grads = context.source.segment(call.args[0])
            edits.append(context.edit(call, _each(tf, f"1 / {scale}", grad, grads)))
    for apply in applies:
        edits.append(
            _scale_back(context, apply, tf, scale, _fresh(_function(context, apply), "grad"))
        )
        context.applies_done.add(id(apply))
    unscaled = _lines([c for c in calls if _method(c) == UNSCALE])
    anchor = next((c for c in calls if _method(c) == SCALE), calls[0])
    context.fix(
        CODE,
        anchor,
        f"{text}.{SCALE}() -> scale_loss(), unscaled explicitly at {unscaled}, scaled back at "
        f"{_lines(applies)}",
        edits,
        consumes=set(),
        help=table.KERAS3_BEHAVIOUR,
    )
    if not constructions(context):
        context.note(CODE, anchor, table.KERAS3_RULE_HERE, help=table.KERAS3_RULE_HELP)
    applying = {id(_function(context, apply)) for apply in applies}
    for call in calls:
        if _method(call) == SCALE and id(_function(context, call)) not in applying:
            context.note(CODE, call, _TRACED, help=_TRACED_HELP)
    rounding = _not_power_of_two(context)
    for apply in applies if rounding else ():
        context.note(
            CODE,
            apply,
            f"scaled back exactly only for a power-of-two scale; {rounding}",
            help=_ROUNDING_HELP,
        )
    return "", True


def home_of(context: Context, call: ast.Call) -> int:
    """id() of the home of the call's receiver (calls with the same receiver text and home are
    one optimizer)."""
    assert isinstance(call.func, ast.Attribute)
    return id(_home(context, call.func.value))


def _home(context: Context, receiver: ast.expr) -> ast.AST:
    """The class of `self.x`; the function (or module) whose scope binds `x` for `x`, `x.y`."""
    root = receiver
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and root.id in ("self", "cls"):
        current = parent(context, receiver)
        while current is not None and not isinstance(current, ast.ClassDef):
            current = parent(context, current)
        return current if current is not None else context.tree
    if isinstance(root, ast.Name):
        scope = context.names.scope_of_load.get(id(root))
        bindings = context.names.lookup(root.id, scope) if scope is not None else None
        if bindings:
            return bindings[0].scope.node
    return context.tree


def _applies(context: Context, home: ast.AST, receiver: ast.expr) -> list[ast.Call]:
    wanted = ast.dump(receiver)
    return [
        node
        for node in ast.walk(home)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "apply_gradients"
        and ast.dump(node.func.value) == wanted
        and _home(context, node.func.value) is home
    ]


def _function(context: Context, node: ast.AST) -> ast.AST:
    current = parent(context, node)
    while current is not None and not isinstance(current, _FUNCTIONS):
        current = parent(context, current)
    return current if current is not None else context.tree


def _lines(calls: list[ast.Call]) -> str:
    numbers = ", ".join(str(c.lineno) for c in calls)
    return f"line {numbers}" if len(calls) == 1 else f"lines {numbers}"


def _method(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""
