"""LSO027: one optimizer passed to two models' compile(), which Keras 3 refuses to train (keras3).

Keras 2's optimizers created a variable's slots at its first step, so one optimizer trained a
GAN's generator and discriminator, compiled with it both: one step counter and one loss scale.
Keras 3's is built for the variables of its first step and raises "Unknown variable" at the
second model's first step. Reported at the second compile(), where one optimizer is provably
shared: a name bound once (or several times in one straight block, the last before each read:
`opt = LossScaleOptimizer(opt)` wraps it in place; or an attribute, `self.optimizer`, stored
once in the module) to a Keras optimizer's or loss scale optimizer's construction, passed as
the optimizer of compile() calls on two different receivers that both run (not in two branches
of one `if`/`try`/`match`), and never built by the module itself (`opt.build(...)`, the fix,
shares it on Keras 3 too).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codemods import table
from codemods.meaning.module import Context
from codemods.meaning.names import Binding
from codemods.source import one_line

CODE = "LSO027"
_BRANCHING = (ast.If, ast.Try, ast.Match, ast.IfExp)


def on_module(context: Context) -> None:
    if context.target != "keras3" or ".compile(" not in context.source.text:
        return
    compiles: dict[object, list[tuple[ast.Call, ast.expr]]] = {}
    built: set[object] = set()  # built by the code itself (`opt.build(...)`): the fix is there
    for call in context.names.calls:
        if isinstance(call.func, ast.Attribute) and call.func.attr == "build":
            built.add(_one_object(context, call.func.value))
        optimizer = _optimizer_of(call)
        if optimizer is None:
            continue
        key = _one_object(context, optimizer)
        if key is not None:
            compiles.setdefault(key, []).append((call, optimizer))
    for key in built:
        compiles.pop(key, None)
    if not any(len(calls) > 1 for calls in compiles.values()):
        return
    branches = _branches(context.tree)
    for calls in compiles.values():
        calls.sort(key=lambda pair: (pair[0].lineno, pair[0].col_offset))
        for index, (call, optimizer) in enumerate(calls[1:], start=1):
            first = next(
                (
                    earlier
                    for earlier, _ in calls[:index]
                    if _receiver(context, earlier) != _receiver(context, call)
                    and not _exclusive(branches, earlier, call)
                ),
                None,
            )
            if first is None or not context.wants(CODE, call):
                continue
            written, a, b = (
                one_line(context.source.segment(optimizer), 40),
                one_line(_receiver(context, first), 40),
                one_line(_receiver(context, call), 40),
            )
            # Every model compiled with it: building for two leaves a third's variables unknown.
            models = list(dict.fromkeys(_receiver(context, c) for c, _ in calls))
            variables = " + ".join(f"{one_line(m, 40)}.trainable_variables" for m in models)
            where = (
                "after both compile()"
                if len(models) == 2
                else f"after the last compile() (line {calls[-1][0].lineno})"
            )
            context.report(
                CODE,
                call,
                f"{written} is also {a}'s optimizer (compile() at line {first.lineno}): Keras 3 "
                f"refuses {b}'s variables at its first step",
                reason="no-equivalent",
                help=f"{where}: {written}.build({variables}) (shared as in TF 2.4), "
                "or use --target shim",
            )
            break


def _optimizer_of(call: ast.Call) -> ast.expr | None:
    """The optimizer of a `model.compile(...)` call: `optimizer=` or the first argument."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "compile"):
        return None
    for keyword in call.keywords:
        if keyword.arg == "optimizer":
            return keyword.value
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return None


def _one_object(context: Context, optimizer: ast.expr) -> object | None:
    """A key for the one optimizer object `optimizer` holds, or None where not provably one."""
    if isinstance(optimizer, ast.Name):
        scope = context.names.scope_of_load.get(id(optimizer))
        bindings = context.names.lookup(optimizer.id, scope) if scope is not None else None
        binding = _reaching(context, optimizer, bindings or [])
        if binding is None:
            return None
        if not _one_construction(context, binding.statement, ast.Name):
            return None
        return id(binding)
    if isinstance(optimizer, ast.Attribute) and isinstance(optimizer.value, ast.Name):
        stored = _stores(context, optimizer.attr)
        if len(stored) != 1:
            return None
        [statement] = stored
        if not _one_construction(context, statement, ast.Attribute):
            return None
        return ("attribute", optimizer.value.id, optimizer.attr, id(statement))
    return None


def _one_construction(context: Context, statement: ast.AST | None, target: type[ast.expr]) -> bool:
    """`statement` assigns one optimizer object, built once (not in a loop), to one `target`."""
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], target)
        and _constructs_one(context, statement.value)
        and not _in_loop(context, statement)
    )


def _reaching(context: Context, load: ast.Name, bindings: list[Binding]) -> Binding | None:
    """The one binding a read of a name sees: the only one, or, for a name bound several times
    in one straight block of its own scope (`opt = Adam(); opt = LossScaleOptimizer(opt)`), the
    last one before the read, where the read is in that scope (not a closure run later)."""
    if len(bindings) == 1:
        return bindings[0]
    if not bindings or context.names.scope_of_load.get(id(load)) is not bindings[0].scope:
        return None
    statements = [b.statement for b in bindings]
    if any(s is None or not isinstance(s, ast.Assign) for s in statements):
        return None
    body = next(
        (
            block
            for node in ast.walk(context.tree)
            for block in _blocks(node)
            if any(item is statements[0] for item in block)
        ),
        None,
    )
    if body is None or not all(any(item is s for item in body) for s in statements):
        return None
    before = [b for b in bindings if b.statement is not None and b.statement.lineno < load.lineno]
    return max(before, key=lambda b: b.statement.lineno if b.statement else 0, default=None)


def _blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block


def _stores(context: Context, attribute: str) -> list[ast.stmt]:
    """The statements that store an attribute of that name anywhere in the module
    (`self.opt = ...`): the codemod cannot tell one object's attribute from another's."""
    found: list[ast.stmt] = []
    for node in ast.walk(context.tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            if any(isinstance(e, ast.Attribute) and e.attr == attribute for e in elements):
                found.append(node)
    return found


def _constructs_one(context: Context, value: ast.expr | None) -> bool:
    """`value` makes one optimizer object: a Keras optimizer's or loss scale optimizer's class
    called, or Keras's `optimizers.get`/`deserialize` (a new object each call)."""
    if not isinstance(value, ast.Call):
        return False
    qualified = context.qualified(value.func) or ""
    module, _, name = qualified.rpartition(".")
    return (
        qualified in table.ANY_LSO
        or qualified in table.OPTIMIZER_FACTORIES
        or (f"{module}." in table.KERAS_OPTIMIZER_MODULES and name in table.KERAS_OPTIMIZER_CLASSES)
    )


def _in_loop(context: Context, statement: ast.stmt) -> bool:
    return any(
        isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        and any(inner is statement for inner in ast.walk(node))
        for node in ast.walk(context.tree)
    )


def _receiver(context: Context, call: ast.Call) -> str:
    assert isinstance(call.func, ast.Attribute)
    return context.source.segment(call.func.value)


def _branches(tree: ast.Module) -> dict[int, list[tuple[int, str]]]:
    """For each node, the branching statements around it and which of their parts holds it."""
    found: dict[int, list[tuple[int, str]]] = {}

    def visit(node: ast.AST, around: list[tuple[int, str]]) -> None:
        found[id(node)] = around
        for field, child in _children(node):
            inner = [*around, (id(node), field)] if isinstance(node, _BRANCHING) else around
            visit(child, inner)

    visit(tree, [])
    return found


def _children(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    for field, value in ast.iter_fields(node):
        if isinstance(value, ast.AST):
            yield field, value
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, ast.AST):
                    # `match` cases and `except` handlers are parts of their own.
                    part = f"{field}{index}" if field in ("cases", "handlers") else field
                    yield part, item


def _exclusive(branches: dict[int, list[tuple[int, str]]], a: ast.Call, b: ast.Call) -> bool:
    """Two calls in different parts of one branching statement: at most one of them runs."""
    around_a = dict(branches.get(id(a), []))
    return any(
        node in around_a and around_a[node] != part and part != "test"
        for node, part in branches.get(id(b), [])
    )
