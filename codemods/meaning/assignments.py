"""Which assignments a read of a name may see, within one module (for
codemods/meaning/gradients.py).

Not a full dataflow: the binding statements before the read in its scope, latest first, down to
the first that surely ran (not in a branch the read is outside of); a `for` loop's or a
comprehension's target; and, in a loop, the bindings later in the loop body when nothing before
the read in the loop surely ran (the value from the previous turn). A parameter is returned as
its `ast.arg`, for the caller to follow through the module's calls.
"""

from __future__ import annotations

import ast

from codemods.meaning.module import Context

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BRANCHES = (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Match)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


class Reaching:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.names = context.names

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.context.parent(node)

    def of(self, name: ast.Name) -> list[tuple[ast.AST, ast.expr | None, int]]:
        """The assignments whose value a read may see: (statement, value, tuple index or -1);
        value None for a parameter (statement: the ast.arg) or something not followed."""
        scope = self.names.scope_of_load.get(id(name))
        bindings = self.names.lookup(name.id, scope) if scope is not None else None
        if not bindings:
            return []
        here = (name.lineno, name.col_offset)
        before: list[tuple[tuple[int, int], ast.AST, ast.AST]] = []
        inside, carried = [], []
        for binding in bindings:
            statement = binding.statement
            if isinstance(binding.node, ast.arg):
                before.append(((0, 0), binding.node, binding.node))
            elif statement is None or isinstance(
                binding.node, (*_FUNCTIONS, ast.ClassDef, ast.alias)
            ):
                continue
            elif isinstance(binding.scope.node, _COMPREHENSIONS) or (
                isinstance(statement, (ast.For, ast.AsyncFor))
                and any(_contains(s, name) for s in statement.body)
            ):
                inside.append((statement, binding.node))  # a loop's or comprehension's target
            elif _end(statement) <= here:
                before.append(((statement.lineno, statement.col_offset), statement, binding.node))
            elif self._in_same_loop(statement, name):
                carried.append((statement, binding.node))  # from the loop's previous turn
        found = [self._value(statement, target) for statement, target in inside]
        last: ast.AST | None = None
        for _, binder, target in sorted(before, key=lambda t: t[0], reverse=True):
            found.append(self._value(binder, target))
            if self._unconditional(binder, name):
                last = binder
                break
        if not (isinstance(last, ast.stmt) and self._in_same_loop(last, name)):
            found += [self._value(statement, target) for statement, target in carried]
        return found

    def _value(self, statement: ast.AST, target: ast.AST) -> tuple[ast.AST, ast.expr | None, int]:
        if isinstance(statement, ast.arg):
            return statement, None, -1
        if isinstance(statement, ast.Assign):
            if statement is target:
                return statement, statement.value, -1
            for element in statement.targets:
                if isinstance(element, ast.Tuple) and target in element.elts:
                    return statement, statement.value, element.elts.index(target)  # type: ignore[arg-type]
        if isinstance(statement, ast.AugAssign):
            return statement, statement.value, -1
        if isinstance(statement, (ast.For, ast.AsyncFor)) and _inside(target, statement.target):
            return statement, _element(statement.target, target, statement.iter), -1
        comprehension = self._generator_of(target)
        if comprehension is not None:
            return statement, _element(comprehension.target, target, comprehension.iter), -1
        return statement, None, -1

    def _generator_of(self, target: ast.AST) -> ast.comprehension | None:
        current = self.parent(target)
        while current is not None and not isinstance(current, ast.stmt):
            if isinstance(current, ast.comprehension):
                return current
            current = self.parent(current)
        return None

    def _unconditional(self, statement: ast.AST, read: ast.Name) -> bool:
        """Whether every branch holding `statement` also holds `read` (it surely ran)."""
        current = self.parent(statement)
        while current is not None and not isinstance(current, (*_FUNCTIONS, ast.Module)):
            branch = isinstance(current, _BRANCHES) and not isinstance(current, ast.With)
            if branch and not _contains(current, read):
                return False
            current = self.parent(current)
        return True

    def _in_same_loop(self, statement: ast.stmt, read: ast.Name) -> bool:
        current = self.parent(statement)
        while current is not None and not isinstance(current, (*_FUNCTIONS, ast.Module)):
            if isinstance(current, (ast.For, ast.AsyncFor, ast.While)):
                return _contains(current, read)
            current = self.parent(current)
        return False


def _element(target: ast.expr, bound: ast.AST, iterable: ast.expr) -> ast.expr | None:
    """What one element bound by `for <target> in <iterable>` comes from: `for g in grads`
    and `for g, v in zip(grads, vars)` -> grads; `for i, g in enumerate(grads)` -> grads."""
    if target is bound:
        return iterable
    if isinstance(target, ast.Tuple) and bound in target.elts:
        at = target.elts.index(bound)  # type: ignore[arg-type]
        if not isinstance(iterable, ast.Call):
            return None
        called = getattr(iterable.func, "id", "")
        if called == "zip" and at < len(iterable.args):
            return iterable.args[at]
        if called == "enumerate" and at == 1 and iterable.args:
            return iterable.args[0]
    return None


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return any(child is node for child in ast.walk(outer))


def _contains(outer: ast.AST, node: ast.AST) -> bool:
    start = (getattr(outer, "lineno", 0), getattr(outer, "col_offset", 0))
    return start <= (node.lineno, node.col_offset) < _end(outer)  # type: ignore[attr-defined]


def _end(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0
