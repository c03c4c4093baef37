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

`escaping` needs less, by two facts: the explicit unscaling computes Keras 2's own values, so
whatever reads them anywhere reads what it read on TF 2.15; and the one call whose meaning
Keras 3 changes for the same values is apply_gradients, where scaling back gives Keras 2's
meaning whatever the gradients are (LSO021's note). So where they go out of sight (returned by
a public function, kept by a parameter or a public attribute, handed to a function not
followed), once EVERY apply_gradients of the module is on the same receiver and scaled back (or
is one the drop-both rewrite made, which gets its own still-scaled gradients), the module
trains as on TF 2.15 wherever they go in it; each place they are lost from sight gets a note
(an apply_gradients of Keras 3's class in another module divides them again). Not where an
apply_gradients cannot be scaled back (a receiver with a call, more than its pairs, a file
that builds a non-Keras optimizer), nor for `self.x()` of a class defining `x` (a wrapper).
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.gradient_reach import GradientReach
from codemods.meaning.holders import methods_named
from codemods.meaning.module import Context
from codemods.rules._explicit_unscaling import (
    _ROUNDING_HELP,
    _each,
    _fresh,
    _not_power_of_two,
    _scale_back,
)
from codemods.rules._tf24 import constructions, parent, tensorflow_name
from codemods.rules.unproven_gradient_scaling import non_keras_optimizer
from codemods.source import Edit
from codemods.table import Why

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
_LEFT = "unscaled as by Keras 2, then out of sight: {why}"
_LEFT_HELP = (
    "Keras 3's apply_gradients elsewhere divides them again: scale them back there, each times "
    "opt.scale_loss(1.0) (--explain LSO011)"
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
            return Why("elsewhere", found.blocked), True
        for apply in found.applies:
            if apply not in applies:
                where = f"`{context.source.segment(apply.func)}` (line {apply.lineno})"
                reach_text = f"the gradients unscaled at line {call.lineno} reach {where}"
                return Why("elsewhere", reach_text), True
    for apply in applies:
        extra = [k.arg for k in apply.keywords if k.arg != "grads_and_vars"]
        if extra or len(apply.args) + len(apply.keywords) != 1:
            return Why(
                "no-equivalent",
                f"the apply_gradients at line {apply.lineno} passes "
                f"{', '.join(str(k) for k in extra) or 'a second argument'}, which Keras 3's "
                "does not take",
            ), True
    scale = f"{text}.scale_loss(1.0)"
    edits = _written_out(context, calls, tf, scale)
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
    _notes(context, anchor, calls, applies, [])
    return "", True


def escaping(context: Context, calls: list[ast.Call]) -> str:
    """Where the unscaled gradients go out of sight: rewrite `calls` (one receiver's) and scale
    back every apply_gradients of the module (module docstring): '' if done, else why not."""
    first = calls[0]
    assert isinstance(first.func, ast.Attribute)
    text = context.source.segment(first.func.value)
    if text in ("self", "cls") and any(methods_named(context.names, _method(c)) for c in calls):
        for call in calls:  # a wrapper's own method (which calls the optimizer's): not one
            context.reported.append(context.source.span(call))
            context.note(CODE, call, f"{text}.{_method(call)}(): this class's own method", help="")
        return ""
    tf = _tf(context, first.func.value)
    if tf is None:
        return "no name for tensorflow reaches it"
    unscales = [c for c in calls if _method(c) == UNSCALE]
    if not unscales:
        return f"no {text}.{UNSCALE}() here"
    applies = [
        c for c in context.names.calls
        if isinstance(c.func, ast.Attribute) and c.func.attr == "apply_gradients"
        and id(c) not in context.applies_done
    ]  # fmt: skip
    if non_keras_optimizer(context):
        return "the file builds an optimizer without Keras 3's scale_loss"
    for apply in applies:
        assert isinstance(apply.func, ast.Attribute)
        extra = [k.arg for k in apply.keywords if k.arg != "grads_and_vars"]
        if context.source.segment(apply.func.value) != text:
            return f"the apply_gradients at line {apply.lineno} is on another receiver"
        if extra or len(apply.args) + len(apply.keywords) != 1:
            return f"the apply_gradients at line {apply.lineno} passes more than its pairs"
        if any(isinstance(n, ast.Call) for n in ast.walk(apply.func.value)):
            return f"the apply_gradients at line {apply.lineno} has a call in its receiver"
        if _tf(context, apply.func.value) is None:
            return f"the apply_gradients at line {apply.lineno} is not on a name or attribute"
    ends: list[tuple[ast.AST, str]] = []
    reach = GradientReach(context)
    for call in unscales:
        reach.of(call, ends)
    scale = f"{text}.scale_loss(1.0)"
    edits = _written_out(context, calls, tf, scale)
    for apply in applies:
        assert isinstance(apply.func, ast.Attribute)
        own = f"{context.source.segment(apply.func.value)}.scale_loss(1.0)"
        grad = _fresh(_function(context, apply), "grad")
        edits.append(_scale_back(context, apply, _tf(context, apply.func.value) or tf, own, grad))
        context.applies_done.add(id(apply))
    anchor = next((c for c in calls if _method(c) == SCALE), unscales[0])
    lines = ", ".join(str(a.lineno) for a in applies)
    applied = f"every apply_gradients scaled back (line {lines})" if applies else "none applied"
    context.fix(
        CODE,
        anchor,
        f"{text}.{SCALE}() -> scale_loss(), unscaled explicitly at line {unscales[0].lineno}, "
        f"{applied}",
        edits,
        consumes=set(),
        help=table.KERAS3_BEHAVIOUR,
    )
    _notes(context, calls[0], calls, applies, ends)
    return ""


def _notes(
    context: Context,
    anchor: ast.Call,
    calls: list[ast.Call],
    applies: list[ast.Call],
    ends: list[tuple[ast.AST, str]],
) -> None:
    """The notes of an optimizer-wide rewrite: Keras 3's rule where no constructor here says it,
    each place the unscaled gradients leave sight (`ends`), a scale_loss traced apart from every
    apply_gradients, a scale that may not be a power of two."""
    if not constructions(context):
        context.note(CODE, anchor, table.KERAS3_RULE_HERE, help=table.KERAS3_RULE_HELP)
    said: set[int] = set()
    for node, why in ends:
        if getattr(node, "lineno", 0) not in said:
            said.add(node.lineno)  # type: ignore[attr-defined]
            context.note(CODE, node, _LEFT.format(why=why), help=_LEFT_HELP)  # type: ignore[arg-type]
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


def _tf(context: Context, receiver: ast.expr) -> str | None:
    root = receiver
    while isinstance(root, ast.Attribute):
        root = root.value
    return tensorflow_name(context, root) if isinstance(root, ast.Name) else None


def _written_out(context: Context, calls: list[ast.Call], tf: str, scale: str) -> list[Edit]:
    """get_scaled_loss -> scale_loss; get_unscaled_gradients(g) -> each gradient times
    1 / `scale` (Keras 2's arithmetic)."""
    edits: list[Edit] = []
    for call in calls:
        assert isinstance(call.func, ast.Attribute)
        if _method(call) == SCALE:
            end = context.source.offset(call.func.end_lineno or 0, call.func.end_col_offset or 0)
            edits.append(Edit(end - len(SCALE), end, "scale_loss"))
        else:
            grad = _fresh(_function(context, call), "grad")
            grads = context.source.segment(call.args[0])
            edits.append(context.edit(call, _each(tf, f"1 / {scale}", grad, grads)))
    return edits


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
