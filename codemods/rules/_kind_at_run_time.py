"""LSO008 where the module does not decide the kind of `opt`: the dispatch TF 2.4-2.8 made, as code.

TF 2.4-2.8's function (tensorflow/python/training/experimental/mixed_precision.py at v2.8.0,
`_wrap_optimizer`) refused an optimizer already wrapped in a loss scale optimizer (ValueError),
wrapped a tf.compat.v1.train.Optimizer in TensorFlow's TF1 MixedPrecisionLossScaleOptimizer, a
Keras one in Keras's LossScaleOptimizer, refused anything else (ValueError), then turned on
grappler's auto_mixed_precision pass. Where `opt`'s kind is known only at run time, the call

    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, loss_scale)

becomes

    tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})
    opt = (tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt, loss_scale)
        if isinstance(opt, tf.compat.v1.train.Optimizer)
        else tf.keras.mixed_precision.LossScaleOptimizer(opt, <loss_scale as LSO001 translates it>))

TensorFlow's TF1 function is the one TF 2.4-2.8 called for a tf.compat.v1 optimizer (it refuses
its own loss scale optimizer, ValueError, and sets the pass too). `opt` is read more than once:
a name or an attribute of one is repeated; anything else (a call) is first bound to a fresh name
in a statement of its own, exact only where the call is the statement's whole value and `opt` its
first argument (nothing of the statement runs before it). The loss scale is written once per
branch (one runs): as written for the TF1 function, translated for Keras's class (LSO001; a
LossScale object bound to a name stays, the TF1 branch needs it, and Keras's class reads a
DynamicLossScale's run-time values from it: `object_keywords`). Keras 2's class raises
TypeError on a loss scale optimizer or a non-optimizer; Keras 3's wraps a LossScaleOptimizer
again without a word (gradients unscaled twice), so on keras3 a statement before raises
ValueError for one, as TF 2.4-2.8 did; a non-optimizer fails there with AttributeError.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context, Spelling
from codemods.rules._tf24 import parent
from codemods.rules.loss_scale_optimizer_call import _number
from codemods.source import Edit

V1_OPTIMIZER = "tensorflow.compat.v1.train.Optimizer"
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)
_WHOLE = (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)
# A moved expression is copied as written: none of these, which other rules may rewrite in place.
_OTHER_RULES = ("tensorflow", "keras", "tf_keras", "compat_lso")


def statement(context: Context, call: ast.Call) -> ast.stmt | None:
    """The simple statement that holds `call`, alone at the start of its line, with no function
    or lambda between them (what is inserted before it then runs just before the call)."""
    current: ast.AST = call
    while not isinstance(current, ast.stmt):
        if isinstance(current, ast.Lambda):
            return None
        above = parent(context, current)
        if above is None:
            return None
        current = above
    source = context.source
    line_start = source.lines(current)[0]
    before = source.text[line_start : source.span(current)[0]]
    if not isinstance(current, _SIMPLE) or before.strip():
        return None
    if id(current) not in context.names.body_of:
        return None
    return current


def dispatch(
    context: Context,
    call: ast.Call,
    opt: ast.expr | ast.keyword,
    keywords: list[tuple[str, str]],
    spelled: dict[str, Spelling],
) -> list[Edit] | str:
    """The edits that write the run-time dispatch in place of `call` (whose func the caller
    renames to the TF1 function), or why it cannot be written exactly.

    `keywords`: the loss scale as Keras's class takes it; `spelled`: the spellings of the TF1
    optimizer class, Keras's class and the grappler option's setter, by those names."""
    source = context.source
    value = opt.value if isinstance(opt, ast.keyword) else opt
    held = statement(context, call)
    if held is None or not isinstance(held, _WHOLE) or held.value is not call:
        return "the call is not the whole value of a statement of its own line"
    indent = source.line(held.lineno)[: held.col_offset]
    unit = _indent_unit(context)
    before: list[str] = []
    edits: list[Edit] = []
    if _plain(value):
        name = source.segment(value)
    else:
        written: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
        first = min(written, key=lambda n: (n.lineno, n.col_offset))
        if first is not opt:
            return "the optimizer, read twice, is not the call's first argument to move"
        if any(
            (context.qualified(node) or "").startswith(_OTHER_RULES)
            for node in ast.walk(value)
            if isinstance(node, (ast.Name, ast.Attribute))
        ):
            return "the optimizer, read twice, is built with names other rules rewrite"
        name = _fresh(context, "optimizer")
        before.append(f"{name} = {source.segment(value)}")
        edits.append(context.edit(value, name))
    lso = spelled["lso"].text
    if context.target == "keras3":
        # Keras 3's class wraps a LossScaleOptimizer again; TF 2.4-2.8 refused one (ValueError).
        before.append(f"if isinstance({name}, {lso}):")
        before.append(f'{unit}raise ValueError("{name} must not already be a LossScaleOptimizer")')
    before.append(f'{spelled["options"].text}({{"auto_mixed_precision": True}})')
    line_start = source.lines(held)[0]
    newline = source.newline
    edits.append(
        Edit(line_start, line_start, "".join(f"{indent}{line}{newline}" for line in before))
    )
    start, end = source.span(call)
    wrapped = _parenthesized(context, held, call)
    continuation = indent + ("\t" if unit == "\t" else "    ")
    arguments = "".join(f", {k}={v}" for k, v in keywords)
    tail = (
        f"{newline}{continuation}if isinstance({name}, {spelled['v1'].text})"
        f"{newline}{continuation}else {lso}({name}{arguments})"
    )
    if not wrapped:
        edits.append(Edit(start, start, "("))
        tail += ")"
    edits.append(Edit(end, end, tail))
    return edits


def object_keywords(context: Context, value: ast.expr) -> list[tuple[str, str]] | None:
    """A DynamicLossScale bound once to a name, its values only known at run time: Keras's class
    takes them read from the object where the code runs, as Keras's own conversion of one did
    (keras/mixed_precision/loss_scale_optimizer.py, `_create_loss_scale_optimizer_from_v1_loss_
    scale`: `initial_loss_scale`, `increment_period`), for a multiplier of 2 only."""
    if not isinstance(value, ast.Name):
        return None
    scope = context.names.scope_of_load.get(id(value))
    bindings = context.names.lookup(value.id, scope) if scope is not None else None
    if not bindings or len(bindings) != 1:
        return None
    bound = bindings[0].value
    if not isinstance(bound, ast.Call) or context.qualified(bound.func) not in (
        table.DYNAMIC_LOSS_SCALE
    ):
        return None
    params = table.DYNAMIC_LOSS_SCALE_PARAMS
    if any(isinstance(a, ast.Starred) for a in bound.args) or len(bound.args) > len(params):
        return None
    given = dict(zip(params, bound.args, strict=False))
    for keyword in bound.keywords:
        if keyword.arg not in params or keyword.arg in given:
            return None
        given[keyword.arg] = keyword.value
    multiplier = given.get("multiplier")
    if multiplier is not None and _number(multiplier) != 2:
        return None
    return [
        ("initial_scale", f"{value.id}.initial_loss_scale"),
        ("dynamic_growth_steps", f"{value.id}.increment_period"),
    ]


def _plain(node: ast.expr) -> bool:
    """A name or an attribute of one: read twice, the same value."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _parenthesized(context: Context, held: ast.stmt, call: ast.Call) -> bool:
    """Whether the statement's value is written `(call)`: the dispatch needs no parentheses."""
    source = context.source
    start, end = source.span(call)
    held_start, held_end = source.span(held)
    return (
        source.text[held_start:start].rstrip().endswith("(")
        and source.text[end:held_end].strip() == ")"
    )


def _indent_unit(context: Context) -> str:
    """One level of the module's indentation, as its first indented block writes it."""
    source = context.source
    for node in ast.walk(context.tree):
        body = getattr(node, "body", None)
        if not isinstance(node, ast.stmt) or not isinstance(body, list) or not body:
            continue
        if body[0].lineno == node.lineno:
            continue
        outer = source.line(node.lineno)[: node.col_offset]
        inner = source.line(body[0].lineno)[: body[0].col_offset]
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer) :]
    return "    "


def _fresh(context: Context, wanted: str) -> str:
    """A name no binding or reference of the module uses."""
    taken = set()
    for node in ast.walk(context.tree):
        if isinstance(node, ast.Name):
            taken.add(node.id)
        elif isinstance(node, ast.arg):
            taken.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            taken.add(node.name)
        elif isinstance(node, ast.alias):
            taken.add((node.asname or node.name).split(".")[0])
    name, number = wanted, 2
    while name in taken:
        name, number = f"{wanted}_{number}", number + 1
    return name
