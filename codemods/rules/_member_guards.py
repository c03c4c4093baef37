"""Feature tests of Keras 2's loss scale optimizer members, on --target keras3 (LSO011, LSO017).

`if hasattr(opt, "get_scaled_loss"): loss = opt.get_scaled_loss(loss)`: where LSO011 or LSO017
rewrote or reported a use of a Keras 2 member on `opt`, a hasattr/getattr naming such a member
(string literal) on the same receiver is always False (None) on Keras 3, whose class lacks it:
the rewritten code under it would never run, and the program would train silently differently.
The guard follows the rewrite (table.KERAS2_GUARDED_MEMBERS): where every use of the member on
that receiver was rewritten, to the Keras 3 member the rewritten code uses if every Keras 3
optimizer has it from construction on (`get_scaled_loss` -> `scale_loss`), else a `hasattr` to an
isinstance check of the class the file names at module level; anything else is reported at the
guard. keras2 is Keras 2 and the shim's class keeps Keras 2's members: nothing changes there.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from codemods import table
from codemods.meaning.module import Context
from codemods.source import one_line

_FEATURE_TESTS = frozenset({"hasattr", "getattr"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_CLASSES = table.TF24_LSO | table.KERAS3_ONLY_LSO


def follow(context: Context, made_here: Callable[[ast.expr], bool]) -> None:
    """After LSO011 and LSO017 ran on keras3 (not on tf_keras code: that keeps the members).
    `made_here(receiver)`: it may hold a TF 2.4-2.15 loss scale optimizer made in the module."""
    guards = [call for call in context.names.calls if _member(call)]
    owners = _owners(context.tree) if guards else {}
    for guard in guards:
        receiver = guard.args[0]
        member = _member(guard)
        code, keras3 = table.KERAS2_GUARDED_MEMBERS[member]
        uses = [
            node
            for node in context.names.attributes
            if node.attr in table.KERAS2_GUARDED_MEMBERS
            and ast.dump(node.value) == ast.dump(receiver)
        ]
        if not any(_fixed(context, n) or _reported(context, n) for n in uses) and not made_here(
            receiver
        ):
            continue  # neither rewritten nor reported nor known to be one: not its guard
        if not context.wants(code, guard):
            continue
        same = [node for node in uses if node.attr == member]
        mine = [node for node in same if owners[id(node)] is owners[id(guard)]]
        same = mine or same  # the guard's own function's uses, where it has any
        all_fixed = bool(same) and all(_fixed(context, node) for node in same)
        text = context.source.segment(guard)
        quoted = context.source.segment(guard.args[1])
        if all_fixed and keras3 and quoted[:1] in ("'", '"') and quoted[:1] == quoted[-1:]:
            new = quoted[0] + keras3 + quoted[0]
            start = context.source.span(guard.args[1])[0] - context.source.span(guard)[0]
            after = text[:start] + new + text[start + len(quoted) :]
            context.fix(
                code,
                guard,
                f"{one_line(text)} -> {one_line(after)}, which the rewritten code calls",
                [context.edit(guard.args[1], new)],
                consumes=set(),
            )
            continue
        cls = _class_named(context) if _plain_hasattr(guard) else None
        if all_fixed and cls is not None:
            new = f"isinstance({context.source.segment(receiver)}, {cls})"
            context.fix(
                code,
                guard,
                f"{one_line(text)} -> {new}: Keras 3's class has no {member}",
                [context.edit(guard, new)],
                consumes=set(),
            )
            continue
        always = "False" if guard.func.id == "hasattr" else "None"  # type: ignore[attr-defined]
        context.report(
            code,
            guard,
            f"{one_line(text)} is always {always} on Keras 3 (its class has no {member})",
            reason="no-equivalent",
            help=(
                f"test isinstance({context.source.segment(receiver)}, "
                "keras.optimizers.LossScaleOptimizer), or the Keras 3 member the code now uses"
            ),
        )


def _member(call: ast.Call) -> str:
    """The Keras 2 member a `hasattr(x, "name")` / `getattr(x, "name", ...)` asks for, or ''."""
    if not (
        isinstance(call.func, ast.Name)
        and call.func.id in _FEATURE_TESTS
        and len(call.args) >= 2
        and not any(isinstance(a, ast.Starred) for a in call.args[:2])
    ):
        return ""
    name = call.args[1]
    if isinstance(name, ast.Constant) and name.value in table.KERAS2_GUARDED_MEMBERS:
        return str(name.value)
    return ""


def _plain_hasattr(call: ast.Call) -> bool:
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "hasattr"
        and len(call.args) == 2
        and not call.keywords
    )


def _fixed(context: Context, node: ast.AST) -> bool:
    """Some fix still standing edits the text of `node`."""
    start, end = context.source.span(node)  # type: ignore[arg-type]
    return any(
        fix.active and edit.start < end and start < edit.end
        for fix in context.fixes
        for edit in fix.edits
    )


def _reported(context: Context, node: ast.AST) -> bool:
    start, end = context.source.span(node)  # type: ignore[arg-type]
    return any(s < end and start < e for s, e in context.reported)


def _class_named(context: Context) -> str | None:
    """The loss scale optimizer's class as the file spells it, Keras 3's on keras3 (TF 2.4's
    spellings are Keras 3's class there), unrewritten, through a module-level name."""
    module = context.names.module_scope.bindings
    for node in context.names.attributes:
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if (
            isinstance(root, ast.Name)
            and root.id in module
            and context.qualified(node) in _CLASSES
            and not _fixed(context, node)
        ):
            return context.source.segment(node)
    return None


def _owners(tree: ast.Module) -> dict[int, ast.AST]:
    """id() of each node -> its innermost function (or the module)."""
    owners: dict[int, ast.AST] = {}
    stack: list[tuple[ast.AST, ast.AST]] = [(tree, tree)]
    while stack:
        node, owner = stack.pop()
        owners[id(node)] = owner
        inner = node if isinstance(node, _FUNCTIONS) else owner
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return owners
