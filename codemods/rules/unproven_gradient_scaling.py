"""LSO021: an apply_gradients on a loss scale optimizer whose gradients the codemod cannot follow
to a scaled or an unscaled loss (keras3 only). codemods/rules/gradient_scaling.py decides when.

Where they come from need not be known to keep TF 2.15's numbers: Keras 2's `apply_gradients`
applied `g` as given, Keras 3's divides by its scale first. So each gradient is scaled back,
`g * opt.scale_loss(1.0)` (_explicit_unscaling.py's edit), which that division takes back
exactly for a power-of-two scale, whatever `g` is. The finding stays manual where that cannot
be written: a receiver with a call in it (evaluated twice), an apply_gradients given more than
its pairs (Keras 3's takes no more), a receiver that may be a non-Keras optimizer (no
scale_loss), a receiver that is not a name or an attribute of one.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.gradients import Path
from codemods.meaning.module import Context
from codemods.rules._explicit_unscaling import (
    _ROUNDING_HELP,
    _fresh,
    _not_power_of_two,
    _scale_back,
)
from codemods.rules._tf24 import parent, tensorflow_name
from codemods.rules.keras3_loss_scale_rule import CODE as KERAS3_RULE
from codemods.rules.keras3_loss_scale_rule import DYNAMIC_RULE_NOTE

CODE = "LSO021"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# Optimizers without Keras 3's scale_loss that a receiver only known by its name may hold
# (tf.compat.v1's, TensorFlow Addons', tf_keras's: Keras 2's, which keeps its own meaning).
_V1_TRAIN = ("tensorflow.compat.v1.train.", "tensorflow.train.")
_LEFT_SCALED = (
    "scaled back for gradients applied as given; if they become still-scaled ones (LSO011 at "
    "line {lines}), drop this scale-back"
)
_LEFT_SCALED_HELP = (
    "Keras 3's apply_gradients divides still-scaled gradients itself (--explain LSO021)"
)


def report(context: Context, apply: ast.Call, subject: str, path: Path, certain: bool) -> None:
    if not context.wants(CODE, apply) or _scaled_back(context, apply):
        return
    seen = path.seen or "a path the codemod cannot follow"
    fact = f"{subject}: not known if gradients of a scaled loss ({seen})"
    assert isinstance(apply.func, ast.Attribute)
    receiver = apply.func.value
    root = receiver
    while isinstance(root, ast.Attribute):
        root = root.value
    tf = tensorflow_name(context, root) if isinstance(root, ast.Name) else None
    if tf is None or _why_not(context, apply, certain):
        context.report(CODE, apply, fact, reason=table.reason_of(path.seen, "elsewhere"))
        return
    text = context.source.segment(receiver)
    scale = f"{text}.scale_loss(1.0)"
    edit = _scale_back(context, apply, tf, scale, _fresh(_function(context, apply), "grad"))
    context.applies_done.add(id(apply))
    context.fix(
        CODE,
        apply,
        f"{subject}: scaled back by {scale}, applied as given, as by Keras 2",
        [edit],
        consumes=set(),
        manual=fact,
    )
    # The step now runs Keras 3's rule (the constructor's LSO022 note): said at the training
    # call too, where a trajectory that reaches Keras 2's floor or cap trains differently.
    if context.wants(KERAS3_RULE, apply):
        context.note(KERAS3_RULE, apply, DYNAMIC_RULE_NOTE, help=table.KERAS3_RULE_HELP)
    rounding = _not_power_of_two(context)
    if rounding:
        context.note(
            CODE,
            apply,
            f"scaled back exactly only for a power-of-two scale; {rounding}",
            help=_ROUNDING_HELP,
        )
    lines = _manual_scaling(context, text)
    if lines:
        context.note(CODE, apply, _LEFT_SCALED.format(lines=lines), help=_LEFT_SCALED_HELP)


def _scaled_back(context: Context, apply: ast.Call) -> bool:
    """Already scaled back (a second run): the gradients are multiplied by a scale_loss()."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "scale_loss"
        for argument in [*apply.args, *(k.value for k in apply.keywords)]
        for node in ast.walk(argument)
    )


def _why_not(context: Context, apply: ast.Call, certain: bool) -> str:
    assert isinstance(apply.func, ast.Attribute)
    if any(isinstance(node, ast.Call) for node in ast.walk(apply.func.value)):
        return "the receiver holds a call"
    extra = [k.arg for k in apply.keywords if k.arg != "grads_and_vars"]
    if extra or len(apply.args) + len(apply.keywords) != 1:
        return "Keras 3's apply_gradients takes its pairs only"
    if not certain and non_keras_optimizer(context):
        return "the receiver may be a non-Keras optimizer"
    return ""


def non_keras_optimizer(context: Context) -> bool:
    for call in context.names.calls:
        qualified = context.qualified(call.func) or ""
        if qualified.startswith(_V1_TRAIN) and qualified.endswith("Optimizer"):
            return True
        if qualified.startswith(("tensorflow_addons.optimizers.", "tf_keras.")):
            return True
    return False


def _manual_scaling(context: Context, receiver: str) -> str:
    """Lines of get_scaled_loss/get_unscaled_gradients on `receiver` that LSO011 left manual."""
    manual = {f.line for f in context.findings if f.code == "LSO011" and not f.fixed}
    lines = sorted(
        call.lineno
        for call in context.names.calls
        if isinstance(call.func, ast.Attribute)
        and call.func.attr in ("get_scaled_loss", "get_unscaled_gradients")
        and context.source.segment(call.func.value) == receiver
        and call.lineno in manual
    )
    return ", ".join(str(line) for line in lines)


def _function(context: Context, node: ast.AST) -> ast.AST:
    current = parent(context, node)
    while current is not None and not isinstance(current, _FUNCTIONS):
        current = parent(context, current)
    return current if current is not None else context.tree
