"""LSO011 on keras3 where the code reads the unscaled gradients before apply_gradients
(clipping, logging, accumulation, a loop over them): unscale explicitly, scale back at apply.

Keras 3's `apply_gradients` divides by the loss scale; Keras 2's applies what it is given. So,
where the drop-both rewrite (codemods/rules/manual_loss_scaling.py) cannot be proven, the
numbers of TF 2.15 are kept by writing out both halves, each equal to Keras 2's:

- `opt.get_scaled_loss(loss)` -> `opt.scale_loss(loss)` (the same product);
- `opt.get_unscaled_gradients(grads)` -> each gradient times `1 / opt.scale_loss(1.0)` (Keras
  2's own arithmetic: the reciprocal of the scale, cast to the gradient's dtype, by
  `tf.math.scalar_mul`, which keeps an `IndexedSlices` one, as Keras 2 did);
- every `apply_gradients` those gradients reach -> each gradient times `opt.scale_loss(1.0)`,
  which Keras 3's division takes back exactly: the scale is a power of two.

`opt.scale_loss(1.0)` is the scale Keras 3 divides by in the same step, on its loss scale
optimizer (`initial_scale` before the first step, then `dynamic_scale`) and on an optimizer
with `loss_scale_factor` alike. codemods/meaning/gradient_uses.py follows the unscaled
gradients forward: the rewrite is made only where every place they reach is read-only or an
`apply_gradients` of the same optimizer in the same function, and that function has no other.
"""

from __future__ import annotations

import ast
import math
import re

from codemods import table
from codemods.meaning.gradient_uses import GradientUses
from codemods.meaning.module import Context
from codemods.rules._tf24 import constructions, tensorflow_name
from codemods.source import Edit
from codemods.table import Why

CODE = "LSO011"
_ROUNDING_HELP = (
    "nothing to change if the scale is a power of two; else the gradients applied may differ "
    "from TF 2.15's in the last bit (--explain LSO011)"
)
SCALE, UNSCALE = "get_scaled_loss", "get_unscaled_gradients"


def migrate(context: Context, group: list[ast.Call], owner: ast.AST) -> str:
    """Rewrite the group (one function's calls on one receiver); '' if done, else why not."""
    first = group[0]
    assert isinstance(first.func, ast.Attribute)
    receiver = context.source.segment(first.func.value)
    root = first.func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return f"`{receiver}` is not a name or an attribute of one"
    tf = tensorflow_name(context, root)
    if tf is None:
        return "no name for tensorflow reaches this function"
    unscales = [c for c in group if _method(c) == UNSCALE]
    for call in group:
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            return f"the call at line {call.lineno} does not pass one argument"
    uses = GradientUses(context)
    applies: list[ast.Call] = []
    for call in unscales:
        found = uses.of(call)
        if found.blocked:
            return Why(
                "elsewhere", f"the unscaled gradients of line {call.lineno}: {found.blocked}"
            )
        applies += [a for a in found.applies if a not in applies]
    blocked = _applies(context, applies, receiver, owner)
    if blocked:
        return blocked
    source = context.source
    edits: list[Edit] = []
    for call in group:
        if _method(call) == SCALE:
            assert isinstance(call.func, ast.Attribute)
            end = source.offset(call.func.end_lineno or 0, call.func.end_col_offset or 0)
            edits.append(Edit(end - len(SCALE), end, "scale_loss"))
    scale = f"{receiver}.scale_loss(1.0)"
    grad = _fresh(owner, "grad")  # and var, var_2, ... alike (_scale_back)
    for call in unscales:
        grads = source.segment(call.args[0])
        edits.append(context.edit(call, _each(tf, f"1 / {scale}", grad, grads)))
    for apply in applies:
        edits.append(_scale_back(context, apply, tf, scale, grad))
        context.applies_done.add(id(apply))
    lines = ", ".join(str(a.lineno) for a in applies)
    anchor = next((c for c in group if _method(c) == SCALE), None)
    if anchor is None:  # the loss is scaled in another function (reported there if not here)
        anchor = unscales[0]
        message = f"{receiver}.{UNSCALE}() -> times 1 / scale_loss(1.0), scaled back at line "
        message += lines
    else:
        message = (
            f"{receiver}.{SCALE}() -> scale_loss(), unscaled explicitly at line "
            f"{unscales[0].lineno}, scaled back at line {lines}"
        )
    context.fix(
        CODE,
        anchor,
        message,
        edits,
        consumes=set(),
        help=table.KERAS3_BEHAVIOUR,
    )
    if not constructions(context):
        context.note(CODE, anchor, table.KERAS3_RULE_HERE, help=table.KERAS3_RULE_HELP)
    rounding = _not_power_of_two(context)
    for apply in applies if rounding else ():
        context.note(
            CODE,
            apply,
            f"scaled back exactly only for a power-of-two scale; {rounding}",
            help=_ROUNDING_HELP,
        )
    return ""


def _applies(context: Context, applies: list[ast.Call], receiver: str, owner: ast.AST) -> str:
    if not applies:
        return "they reach no apply_gradients in this function"
    source = context.source
    for apply in applies:
        assert isinstance(apply.func, ast.Attribute)
        if source.segment(apply.func.value) != receiver:
            return Why(
                "elsewhere", f"they reach `{source.segment(apply.func)}` (line {apply.lineno})"
            )
        extra = [k.arg for k in apply.keywords if k.arg != "grads_and_vars"]
        if extra or len(apply.args) + len(apply.keywords) != 1:
            return Why(
                "no-equivalent",
                f"the apply_gradients at line {apply.lineno} passes "
                f"{', '.join(str(k) for k in extra) or 'a second argument'}, which Keras 3's "
                "does not take",
            )
    for node in ast.walk(owner):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "apply_gradients"
            and source.segment(node.func.value) == receiver
            and node not in applies
        ):
            return f"the apply_gradients at line {node.lineno} gets other gradients"
    return ""


_KERAS2_KEYWORD = re.compile(
    r"the apply_gradients at line (\d+) passes (.+), which Keras 3's does not take"
)


def keyword_help(reason: str) -> str | None:
    """The help for a reason that is only a Keras 2 keyword of apply_gradients: drop it and run
    again (the rewrite then writes the unscaling out); None for any other reason. The general
    help, the still-scaled gradients straight to apply_gradients, is wrong where code between
    reads them (clipping, an all-reduce), as it does where such a keyword is passed. Gradients
    the code all-reduced itself (experimental_aggregate_gradients=False) are summed again by
    Keras 3: divided by num_replicas_in_sync, that sum gives them back, a mean or a sum."""
    found = _KERAS2_KEYWORD.search(reason)
    if found is None or found.group(2) == "a second argument":
        return None
    line, keywords = found.groups()
    also = (
        "; Keras 3 sums over replicas again: divide reduced gradients by num_replicas_in_sync"
        if "experimental_aggregate_gradients" in keywords
        else ""
    )
    return f"drop {keywords} (line {line}) and rerun the codemod{also}"


def _not_power_of_two(context: Context) -> str:
    """Scaling back is exact for a power-of-two scale: '' where the scale each loss scale
    optimizer built here is given (`loss_scale`, `initial_scale`, by keyword or position) is
    one, or the default; else which one may not be (the gradients may then differ in the last
    bit)."""
    for call in constructions(context):
        given = [k.value for k in call.keywords if k.arg in ("loss_scale", "initial_scale")]
        given += call.args[1:3]
        for argument in given:
            if isinstance(argument, ast.Constant) and isinstance(argument.value, (bool, str)):
                continue  # dynamic=True, 'dynamic'
            number = _number(argument)
            text = context.source.segment(argument)
            if number is None:
                return f"`{text}` (line {call.lineno}) is only known at run time"
            if number <= 0 or math.log2(number) % 1:
                return f"{text} (line {call.lineno}) is not one"
    return ""


def _number(node: ast.expr) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and isinstance(node.left, ast.Constant)
        and isinstance(node.right, ast.Constant)
        and node.left.value == 2
        and isinstance(node.right.value, int)
    ):
        return 2.0**node.right.value
    return None


def _each(tf: str, factor: str, grad: str, grads: str) -> str:
    each = f"None if {grad} is None else {tf}.math.scalar_mul({_cast(tf, factor, grad)}, {grad})"
    return f"[{each} for {grad} in {grads}]"


def _cast(tf: str, factor: str, grad: str) -> str:
    """The factor in the gradient's dtype, as Keras 2 multiplied (scalar_mul would refuse a
    float32 tensor for a float16 gradient)."""
    return f"{tf}.cast({factor}, {grad}.dtype)"


def _scale_back(context: Context, apply: ast.Call, tf: str, scale: str, grad: str) -> Edit:
    pairs = apply.args[0] if apply.args else apply.keywords[0].value
    zipped = pairs
    if (
        isinstance(zipped, ast.Call)
        and getattr(zipped.func, "id", "") in ("list", "tuple")
        and len(zipped.args) == 1
    ):
        zipped = zipped.args[0]
    if isinstance(zipped, ast.Call) and getattr(zipped.func, "id", "") == "zip" and zipped.args:
        grads = zipped.args[0]
        return context.edit(grads, _each(tf, scale, grad, context.source.segment(grads)))
    text = context.source.segment(pairs)
    var = grad.replace("grad", "var")
    return context.edit(
        pairs,
        f"[(None if {grad} is None else {tf}.math.scalar_mul({_cast(tf, scale, grad)}, {grad}), "
        f"{var}) "
        f"for {grad}, {var} in {text}]",
    )


def _fresh(owner: ast.AST, wanted: str) -> str:
    taken = {n.id for n in ast.walk(owner) if isinstance(n, ast.Name)}
    name, number = wanted, 2
    while name in taken:
        name, number = f"{wanted}_{number}", number + 1
    return name


def _method(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""
