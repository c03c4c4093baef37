"""LSO020 (and LSO021): what reaches a loss scale optimizer's apply_gradients, per target.

codemods/meaning/gradients.py follows the gradients back to a tape and the loss to a scaling call.
Per `apply_gradients` on a loss scale optimizer:

- gradients of a scaled loss, or unscaled by the code (LSO011's manual pattern): nothing here;
- gradients of an unscaled loss ("wrap-only"): keras3 scales the loss in the tape where that is
  exact (one tape.gradient reaches the call through names and zip only), else reports LSO020 at
  the call; shim gets a note (compat_lso's class keeps Keras 2's meaning);
- unknown: keras3 reports LSO021 at the call with what was seen.

The receiver is a loss scale optimizer when the file builds one into it (`opt = LSO(...)`,
`self.opt = LSO(...)`); `self.optimizer`, `model.optimizer` or a parameter named like an
optimizer may be one in a file that builds one, and the messages say "may".
"""

from __future__ import annotations

import ast

from codemods.meaning.gradients import GradientFlow, Path
from codemods.meaning.module import Context
from codemods.rules import unproven_gradient_scaling
from codemods.rules._tf24 import bound_call, constructions, evidence, keras_class, parent
from codemods.source import Edit
from codemods.table import Why, reason_of

CODE = "LSO020"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)
SCALED_NOW = (
    "the loss was never scaled; it now is: early steps may be skipped while the scale settles, "
    "so they differ from TF 2.15"
)
SCALED_NOW_HELP = (
    "nothing to change if early steps may differ (--explain LSO020); --target shim keeps TF "
    "2.15's numbers"
)


def on_module(context: Context) -> None:
    if context.target == "keras2" or "apply_gradients" not in context.source.text:
        return
    built = constructions(context)
    if not built or evidence(context).keras3_code:
        return  # no loss scale optimizer here, or Keras 3 code (its loop already scales)
    flow: GradientFlow | None = None
    for call in context.names.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "apply_gradients"):
            continue
        certain = _receiver(context, func.value)
        if certain is None or not call.args or context.suppresses(call):
            continue
        if id(call) in context.applies_done or _manual_scaling_beside(context, call):
            continue  # LSO011 rewrites or reports the pair, and says what is in the way
        flow = flow or GradientFlow(context)
        path = flow.gradients(call.args[0])
        receiver = context.source.segment(func.value)
        subject = f"{receiver}.apply_gradients"
        if not certain:
            subject += f" (if the optimizer of line {built[0].lineno})"
        if path.verdict == "unscaled-loss":
            _unscaled_loss(context, flow, call, receiver=receiver, subject=subject, path=path)
        elif path.verdict == "unknown" and context.target == "keras3":
            unproven_gradient_scaling.report(context, call, subject, path, certain)


def _manual_scaling_beside(context: Context, apply: ast.Call) -> bool:
    """Whether the function of `apply` scales or unscales by hand on the same receiver."""
    assert isinstance(apply.func, ast.Attribute)
    owner, receiver = _owner(context, apply), ast.dump(apply.func.value)
    return any(
        isinstance(call.func, ast.Attribute)
        and call.func.attr in ("get_scaled_loss", "get_unscaled_gradients")
        and ast.dump(call.func.value) == receiver
        and _owner(context, call) is owner
        for call in context.names.calls
    )


def _receiver(context: Context, node: ast.expr) -> bool | None:
    """True: a loss scale optimizer built here; False: may be one; None: not one we know of."""
    if isinstance(node, ast.Name):
        bound = bound_call(context, node)
        if bound is not None and keras_class(context.qualified(bound.func)):
            return True
        return False if "opt" in node.id.lower() else None
    if isinstance(node, ast.Attribute):
        for stored in context.names.attributes:
            if stored.attr != node.attr or not isinstance(stored.ctx, ast.Store):
                continue
            holder = parent(context, stored)
            if (
                isinstance(holder, ast.Assign)
                and isinstance(holder.value, ast.Call)
                and keras_class(context.qualified(holder.value.func))
            ):
                return True
        return False if "opt" in node.attr.lower() else None
    return None


def _unscaled_loss(
    context: Context,
    flow: GradientFlow,
    apply: ast.Call,
    *,
    receiver: str,
    subject: str,
    path: Path,
) -> None:
    tape = path.sources[0] if path.sources else apply
    loss = _brief(context.source.segment(path.losses[0])) if path.losses else "the loss"
    if context.target == "shim":
        if context.wants(CODE, apply):
            context.note(
                CODE,
                apply,
                f"{subject} gets gradients of the unscaled loss `{loss}` (line {tape.lineno}), "
                "kept as written",
            )
        return
    if not context.wants(CODE, apply):
        return
    fact = f"{subject} gets gradients of the unscaled loss `{loss}` (line {tape.lineno})"
    rewrite = _scale_in_tape(context, flow, apply, receiver, path)
    if isinstance(rewrite, str):
        context.report(
            CODE, apply, f"{fact}; not rewritten: {rewrite}", reason=reason_of(rewrite, "limit")
        )
        return
    edits, _ = rewrite  # the scaled loss's text: the diff shows it
    context.fix(
        CODE,
        apply,
        f"{fact}: the loss is now scaled in the tape",
        edits,
        consumes=set(),
    )
    # Exact while the scaled gradients stay finite; where they overflow float16, Keras 3 skips
    # the step and lowers the scale, which TF 2.15 (applying the unscaled ones) never did.
    context.note(CODE, apply, SCALED_NOW, help=SCALED_NOW_HELP)


def _scale_in_tape(
    context: Context, flow: GradientFlow, apply: ast.Call, receiver: str, path: Path
) -> tuple[list[Edit], str] | str:
    """The edits that take the gradients of `receiver.scale_loss(loss)`, or why not."""
    if not path.straight or len(path.sources) != 1:
        return "the gradients pass through more than names and zip"
    gradient = path.sources[0]
    owner = _owner(context, apply)
    if _owner(context, gradient) is not owner:
        return Why(
            "elsewhere", f"the gradients come from another function (line {gradient.lineno})"
        )
    for statement in path.names:
        if _reads_of(context, flow, statement) != 1:
            assert isinstance(statement, ast.Assign)
            name = context.source.segment(statement.targets[0])
            return f"`{name}` (line {statement.lineno}) is read elsewhere too"
    func = gradient.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "gradient"
        and isinstance(func.value, ast.Name)
        and gradient.args
    ):
        return f"`{_brief(context.source.segment(gradient))}` is not `<tape>.gradient(loss, ...)`"
    assert isinstance(apply.func, ast.Attribute)
    if not _plain_receiver(apply.func):
        return f"`{receiver}` cannot be written where the loss is"
    loss = gradient.args[0]
    block = _tape_block(context, func.value, owner)
    if block is None:
        return f"no `with tf.GradientTape() as {func.value.id}:` in the same function"
    if _inside(gradient, block):  # taken while the tape records: scale it right there
        text = f"{receiver}.scale_loss({context.source.segment(loss)})"
        return [context.edit(loss, text)], text
    if not isinstance(loss, ast.Name):
        return (
            f"the loss `{_brief(context.source.segment(loss))}` is not a name assigned in the tape"
        )
    assigned = flow.reaching(loss)
    if len(assigned) != 1 or assigned[0][0] not in block.body:
        return f"`{loss.id}` is not assigned once, directly in the tape's `with` block"
    last = block.body[-1]
    if last.lineno == block.lineno:
        return "the tape's `with` block is on one line"
    source = context.source
    indent = source.line(last.lineno)[: last.col_offset]
    fresh = _fresh_name(owner, "scaled_loss")
    insert = source.lines(last)[1]
    text = f"{fresh} = {receiver}.scale_loss({loss.id})"
    return [
        Edit(insert, insert, f"{indent}{text}{source.newline}"),
        context.edit(loss, fresh),
    ], text


def _plain_receiver(func: ast.Attribute) -> bool:
    """`opt`, `self.optimizer`: names and attributes only, the same where the tape is."""
    node: ast.expr = func.value
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _tape_block(context: Context, tape: ast.Name, owner: ast.AST) -> ast.With | None:
    for node in ast.walk(owner):
        if isinstance(node, ast.With) and _owner(context, node) is owner:
            for item in node.items:
                call = item.context_expr
                name = getattr(getattr(call, "func", None), "attr", None) or getattr(
                    getattr(call, "func", None), "id", None
                )
                target = item.optional_vars
                if name == "GradientTape" and isinstance(target, ast.Name) and target.id == tape.id:
                    return node
    return None


def _reads_of(context: Context, flow: GradientFlow, statement: ast.stmt) -> int:
    assert isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name)
    name = statement.targets[0].id
    return sum(
        1
        for load in context.names.loads
        if load.id == name and any(s is statement for s, _, _ in flow.reaching(load))
    )


def _owner(context: Context, node: ast.AST) -> ast.AST:
    current = parent(context, node)
    while current is not None and not isinstance(current, _FUNCTIONS):
        current = parent(context, current)
    return current if current is not None else context.tree


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return any(child is node for child in ast.walk(outer))


def _fresh_name(owner: ast.AST, wanted: str) -> str:
    taken = {n.id for n in ast.walk(owner) if isinstance(n, ast.Name)}
    name, number = wanted, 2
    while name in taken:
        name, number = f"{wanted}_{number}", number + 1
    return name


def _brief(text: str, limit: int = 30) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
