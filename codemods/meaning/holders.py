"""Where one module keeps its values: attribute stores, containers, its functions' calls.

The module-wide indexes that codemods/meaning/instances.py follows a value through, each built
once on first use: which values are stored in an attribute of a name (`self.opt = ...`, matched
by the attribute's name anywhere in the module: the codemod cannot know the object), which
values are put into the list or dict a name holds (`c[k] = v`, `c.append(v)`), which of the
module's functions and classes a call calls, and each function's calls here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codemods.meaning.names import Analysis

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def methods_named(names: Analysis, attr: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The methods `self.attr` (or `cls.attr`) may name: every class of the module's that defines
    one by that name (the codemod cannot tell which class `self` is)."""
    return [
        b.node
        for scope in names.scopes
        if scope.is_class
        for b in scope.bindings.get(attr, ())
        if isinstance(b.node, FUNCTIONS)
    ]


Function = ast.FunctionDef | ast.AsyncFunctionDef
_ADDERS = frozenset({"append", "add", "insert", "setdefault"})


class Holders:
    def __init__(self, names: Analysis) -> None:
        self.names = names
        self._stores: dict[str, list[tuple[ast.expr, int | None]]] | None = None
        self._added: dict[int, list[ast.expr]] | None = None

    def stores(self, attribute: str) -> list[tuple[ast.expr, int | None]]:
        """The values stored in an attribute of that name anywhere here, each with the element
        a tuple target takes (`self.model, self.opt = build()`; None: the value itself)."""
        if self._stores is None:
            self._stores = {}
            for node in ast.walk(self.names.tree):
                if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                    continue
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Attribute):
                        self._stores.setdefault(target.attr, []).append((node.value, None))
                    elif isinstance(target, (ast.Tuple, ast.List)):
                        for i, element in enumerate(target.elts):
                            if isinstance(element, ast.Attribute):
                                self._stores.setdefault(element.attr, []).append((node.value, i))
        return self._stores.get(attribute, [])

    def added_to(self, container: ast.Name) -> list[ast.expr]:
        """Values put into the list or dict a name holds: `c[k] = v`, `c.append(v)`."""
        if self._added is None:
            self._added = {}
            for node in ast.walk(self.names.tree):
                target: ast.Name | None = None
                values: list[ast.expr] = []
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                            target, values = t.value, [node.value]
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _ADDERS
                    and isinstance(node.func.value, ast.Name)
                ):
                    target, values = node.func.value, list(node.args)
                key = self._bindings_key(target) if target is not None else None
                if key is not None:
                    self._added.setdefault(key, []).extend(values)
        key = self._bindings_key(container)
        return self._added.get(key, []) if key is not None else []

    def _bindings_key(self, name: ast.Name) -> int | None:
        """One key for every read of the same name in the same scope."""
        scope = self.names.scope_of_load.get(id(name))
        bindings = self.names.lookup(name.id, scope) if scope is not None else None
        return id(bindings) if bindings else None

    def defined(self, call: ast.Call) -> list[ast.AST]:
        """The module's functions and classes a call may call (`f(...)`, `self.method(...)`)."""
        return self.defined_by(call.func)

    def defined_by(self, func: ast.expr) -> list[ast.AST]:
        """The module's functions and classes `func` may name (`f`, `self.method`)."""
        if isinstance(func, ast.Name):
            scope = self.names.scope_of_load.get(id(func))
            bindings = self.names.lookup(func.id, scope) if scope is not None else None
            kinds = (*FUNCTIONS, ast.ClassDef)
            return [b.node for b in bindings or () if isinstance(b.node, kinds)]
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            return list(methods_named(self.names, func.attr))
        return []

    def calls_of(self, function: Function) -> list[tuple[ast.Call, int]]:
        """Each call of `function` here, and how many leading parameters it fills implicitly."""
        return [
            (call, 1 if isinstance(call.func, ast.Attribute) else 0)
            for call in self.names.calls
            if function in self.defined(call)
        ]


def blocks_around(owner: ast.AST, at: tuple[int, int]) -> set[int]:
    """id() of every statement list, from `owner`'s body down, that holds the position `at`:
    a binding in one of them is passed by every path to `at` (early exits aside). A lambda's
    body is an expression: it has no statement list."""
    found: set[int] = set()
    body = getattr(owner, "body", [])
    bodies: list[list[ast.stmt]] = [body] if isinstance(body, list) else []
    while bodies:
        body = bodies.pop()
        found.add(id(body))
        for statement in body:
            end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
            if not (statement.lineno, statement.col_offset) <= at <= end:
                continue
            if isinstance(statement, (*FUNCTIONS, ast.ClassDef)):
                break
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    bodies.append(inner)
            bodies.extend(handler.body for handler in getattr(statement, "handlers", ()))
            bodies.extend(case.body for case in getattr(statement, "cases", ()))
            break
    return found


def index_in(statement: ast.Assign | ast.AnnAssign, name: ast.Name) -> int | None:
    """The index of `name` in a flat tuple target of `statement` (None: nested or starred)."""
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)) and name in target.elts:
            if any(isinstance(e, ast.Starred) for e in target.elts):
                return None
            return target.elts.index(name)
    return None


def key_of(node: ast.expr) -> int | str | None:
    """A subscript's constant key (`x[1]`, `x[-1]`, `x["opt"]`), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, str)):
        return node.value if not isinstance(node.value, bool) else None
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int)
    ):
        return -node.operand.value
    return None


def own_returns(function: Function) -> Iterator[ast.Return]:
    """The function's own `return` statements (not those of functions or classes inside it)."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        if isinstance(node, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
