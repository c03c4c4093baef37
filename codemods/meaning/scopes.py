"""One walk over a module: its scopes, the bindings in each, and the nodes the rules ask for.

The walk records every scope (module, class, function, lambda, comprehension), every place that
binds a name in it, every name load with the scope it is read in, and, in source pre-order, the
calls, attributes, imports and assignments, so that no rule walks the tree again.
codemods/meaning/names.py resolves what it recorded.

A binding holds its scope weakly: the scope holds its bindings, and a cycle between them would keep
each module's whole tree alive until Python's cycle collector ran (it cost a fifth of a `--check`
over real repositories).
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass, field
from typing import Any

from codemods.meaning.shapes import annotations_of, defaults, is_dotted

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# Fields that hold no names: an expression's context and operators (`Load()`, `Add()`).
_NO_NAMES = frozenset({"ctx", "op", "ops"})
_TARGETS = frozenset({"target", "optional_vars"})  # bound, not read (and `del`'s targets)
# The expressions whose every part is read in the scope they sit in, with the fields that can hold
# one, in ast's field order (`Dict`: all keys, then all values): the walk's common case without
# looking at each field. Names, calls, lambdas, comprehensions and `:=` are walked by hand; an
# expression type not listed (a newer Python's) by the generic walk.
_READ_CHILDREN: dict[type[ast.expr], tuple[str, ...]] = {
    ast.BoolOp: ("values",),
    ast.BinOp: ("left", "right"),
    ast.UnaryOp: ("operand",),
    ast.IfExp: ("test", "body", "orelse"),
    ast.Dict: ("keys", "values"),
    ast.Set: ("elts",),
    ast.Await: ("value",),
    ast.Yield: ("value",),
    ast.YieldFrom: ("value",),
    ast.Compare: ("left", "comparators"),
    ast.FormattedValue: ("value", "format_spec"),
    ast.JoinedStr: ("values",),
    ast.Constant: (),
    ast.Subscript: ("value", "slice"),
    ast.Starred: ("value",),
    ast.List: ("elts",),
    ast.Tuple: ("elts",),
    ast.Slice: ("lower", "upper", "step"),
}


@dataclass(eq=False)
class Binding:
    """One place that binds a name: an import alias, an assignment, a parameter, a def ..."""

    name: str
    scope_ref: weakref.ref[Scope]  # see the module docstring; `scope` reads it
    node: ast.AST  # the ast.alias, ast.Assign, or whatever bound it
    statement: ast.stmt | None
    # For imports: the qualified name bound. For `name = <dotted chain>`: the chain, resolved
    # lazily.
    qualified: str | None = None
    alias_of: ast.expr | None = None
    # For `name = SomeCall(...)`: the call, so rules can follow a value bound once.
    value: ast.expr | None = None
    # `name = None`: a fallback (`except ImportError: tf = None`) that does not decide a meaning.
    none_fallback: bool = False

    @property
    def scope(self) -> Scope:
        scope = self.scope_ref()
        if scope is None:  # its Walk was dropped while the binding was kept
            raise ReferenceError(f"the scope of binding {self.name!r} is gone with its walk")
        return scope

    @property
    def is_import(self) -> bool:
        return isinstance(self.node, ast.alias)


@dataclass(eq=False)
class Scope:
    node: ast.AST
    parent: Scope | None
    is_class: bool = False
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)

    def bind(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)


class Walk:
    """What the walk of one module recorded; read-only once built (several analyses share it)."""

    def __init__(self, tree: ast.Module) -> None:
        self.module_scope = Scope(tree, None)
        self.scopes: list[Scope] = [self.module_scope]
        self.scope_of_load: dict[int, Scope] = {}  # id(ast.Name) -> the scope it is read in
        self.loads: list[ast.Name] = []
        self.calls: list[ast.Call] = []
        self.attributes: list[ast.Attribute] = []
        self.imports: list[ast.Import] = []
        self.import_froms: list[ast.ImportFrom] = []
        self.assigns: list[ast.Assign] = []
        self.annotations: list[ast.expr] = []  # of parameters, returns and `x: T = ...`
        self.body_of: dict[int, list[ast.stmt]] = {}  # id(statement) -> the body list holding it
        self.imported: set[str] = set()  # the names some import or alias binds, in any scope
        self.import_bindings: list[Binding] = []  # those bindings (imports and aliases)
        _Collector(self).run(tree)


class _Collector:
    """The single walk: scopes, bindings, loads, and which body each statement sits in."""

    def __init__(self, walk: Walk) -> None:
        self.analysis = walk
        self.statement: ast.stmt | None = None

    def run(self, tree: ast.Module) -> None:
        self.body(tree.body, self.analysis.module_scope)

    def body(self, statements: list[ast.stmt], scope: Scope) -> None:
        for statement in statements:
            self.analysis.body_of[id(statement)] = statements
            outer, self.statement = self.statement, statement
            self.stmt(statement, scope)
            self.statement = outer

    def scope(self, node: ast.AST, parent: Scope, is_class: bool = False) -> Scope:
        scope = Scope(node, parent, is_class)
        self.analysis.scopes.append(scope)
        return scope

    def bind(self, name: str, scope: Scope, node: ast.AST, **kwargs: object) -> None:
        if name in scope.globals:  # `global x` then `x = ...`: it is the module's x that changes
            scope = self.analysis.module_scope
        binding = Binding(name, weakref.ref(scope), node, self.statement, **kwargs)  # type: ignore[arg-type]
        scope.bind(binding)
        if binding.qualified is not None or binding.alias_of is not None:
            self.analysis.imported.add(name)
            self.analysis.import_bindings.append(binding)

    def stmt(self, statement: ast.stmt, scope: Scope) -> None:
        # Dispatched on the exact type, the commonest first (faster than a match on classes), so
        # the statement is read untyped.
        node: Any = statement
        kind = type(node)
        if kind is ast.Assign:
            self.assign(node, scope)
        elif kind is ast.Expr:
            self.expr(node.value, scope)
        elif kind is ast.If:
            self.expr(node.test, scope)
            self.body(node.body, scope)
            self.body(node.orelse, scope)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            self.function(node, scope)
        elif kind is ast.Return:
            self.expr(node.value, scope)
        elif kind is ast.ImportFrom:
            self.import_from(node, scope)
        elif kind is ast.Import:
            self.analysis.imports.append(node)
            for alias in node.names:
                if alias.asname:
                    self.bind(alias.asname, scope, alias, qualified=alias.name)
                else:
                    top = alias.name.partition(".")[0]
                    self.bind(top, scope, alias, qualified=top)
        elif kind is ast.ClassDef:
            for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                self.expr(expr, scope)
            self.bind(node.name, scope, node)
            self.body(node.body, self.scope(node, scope, is_class=True))
        elif kind is ast.AnnAssign:
            self.analysis.annotations.append(node.annotation)
            self.generic(node, scope)
        elif kind is ast.Global:
            scope.globals.update(node.names)
        elif kind is ast.Nonlocal:
            for name in node.names:
                self.bind(name, scope, node)  # bound in an enclosing function: never an alias
        else:
            self.generic(node, scope)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        annotations = [a for a in (node.returns, *annotations_of(node.args)) if a is not None]
        self.analysis.annotations += annotations
        for expr in (*node.decorator_list, *defaults(node.args), *annotations):
            self.expr(expr, scope)
        self.bind(node.name, scope, node)
        inner = self.scope(node, scope)
        self.arguments(node.args, inner, node)
        self.body(node.body, inner)

    def import_from(self, node: ast.ImportFrom, scope: Scope) -> None:
        self.analysis.import_froms.append(node)
        for alias in node.names:
            if alias.name == "*":
                continue
            local = alias.asname or alias.name
            if node.level or not node.module:
                self.bind(local, scope, alias)  # relative: not something we migrate
            else:
                self.bind(local, scope, alias, qualified=f"{node.module}.{alias.name}")

    def assign(self, node: ast.Assign, scope: Scope) -> None:
        self.analysis.assigns.append(node)
        self.expr(node.value, scope)
        if len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            value = node.value
            self.bind(
                node.targets[0].id,
                scope,
                node,
                alias_of=value if is_dotted(value) else None,
                value=value if type(value) is ast.Call else None,
                none_fallback=type(value) is ast.Constant and value.value is None,
            )
        else:
            for target in node.targets:
                self.target(target, scope)

    def generic(self, node: ast.AST, scope: Scope) -> None:
        for field_name in node._fields:
            if field_name in _NO_NAMES:
                continue
            value = getattr(node, field_name, None)
            if type(value) is list:
                if value and isinstance(value[0], ast.stmt):
                    self.body(value, scope)
                    continue
                for item in value:
                    if isinstance(item, ast.expr) and field_name != "targets":
                        self.expr(item, scope)  # most children: read, not bound
                    elif isinstance(item, ast.AST):
                        self.child(item, scope, node, field_name)
            elif isinstance(value, ast.expr) and field_name not in _TARGETS:
                self.expr(value, scope)
            elif isinstance(value, ast.AST):
                self.child(value, scope, node, field_name)

    def child(self, item: ast.AST, scope: Scope, parent: ast.AST, field_name: str) -> None:
        if isinstance(item, ast.expr):
            if field_name in _TARGETS or (
                field_name == "targets" and isinstance(parent, ast.Delete)
            ):
                self.target(item, scope)
            else:
                self.expr(item, scope)
        elif isinstance(item, ast.ExceptHandler):
            if item.name:
                self.bind(item.name, scope, item)
            self.generic(item, scope)
        elif isinstance(item, ast.pattern):
            self.pattern(item, scope)
        else:
            self.generic(item, scope)

    def pattern(self, node: ast.pattern, scope: Scope) -> None:
        for name in (getattr(node, "name", None), getattr(node, "rest", None)):
            if isinstance(name, str):
                self.bind(name, scope, node)
        self.generic(node, scope)

    def target(self, node: ast.expr, scope: Scope) -> None:
        if isinstance(node, ast.Name):
            self.bind(node.id, scope, node)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self.target(element, scope)
        elif isinstance(node, ast.Starred):
            self.target(node.value, scope)
        else:  # attribute or subscript target: its parts are reads
            self.expr(node, scope)

    def arguments(self, args: ast.arguments, scope: Scope, owner: ast.AST) -> None:
        for arg in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
            if arg is not None:
                self.bind(arg.arg, scope, arg)

    def expr(self, expression: ast.expr | None, scope: Scope) -> None:
        node: Any = expression  # dispatched on the exact type (as `stmt`), so read untyped
        kind = type(node)
        while kind is ast.Attribute:  # a chain, outermost first
            self.analysis.attributes.append(node)
            node = node.value
            kind = type(node)
        if kind is ast.Name:  # the commonest first
            if type(node.ctx) is ast.Load:
                self.analysis.scope_of_load[id(node)] = scope
                self.analysis.loads.append(node)
            else:
                self.bind(node.id, scope, node)
            return
        if kind is ast.Call:
            self.analysis.calls.append(node)
            self.expr(node.func, scope)
            for argument in node.args:
                self.expr(argument, scope)
            for keyword in node.keywords:
                self.expr(keyword.value, scope)
            return
        children = _READ_CHILDREN.get(kind)
        if children is not None:  # an expression whose parts are all read in its scope
            for field_name in children:
                value = getattr(node, field_name)
                if type(value) is list:
                    for item in value:
                        if item is not None:  # a dict's `**` entry has no key
                            self.expr(item, scope)
                elif value is not None:
                    self.expr(value, scope)
            return
        if node is not None:
            self.binding_expr(node, scope)

    def binding_expr(self, node: ast.expr, scope: Scope) -> None:
        """An expression that opens a scope or binds a name (or one of a newer Python's)."""
        match node:
            case ast.Lambda():
                for expr in defaults(node.args):
                    self.expr(expr, scope)
                inner = self.scope(node, scope)
                self.arguments(node.args, inner, node)
                self.expr(node.body, inner)
            case ast.ListComp() | ast.SetComp() | ast.GeneratorExp() | ast.DictComp():
                generators = node.generators
                self.expr(generators[0].iter, scope)
                inner = self.scope(node, scope)
                for index, generator in enumerate(generators):
                    if index:
                        self.expr(generator.iter, inner)
                    self.target(generator.target, inner)
                    for condition in generator.ifs:
                        self.expr(condition, inner)
                if isinstance(node, ast.DictComp):
                    self.expr(node.key, inner)
                    self.expr(node.value, inner)
                else:
                    self.expr(node.elt, inner)
            case ast.NamedExpr():
                self.expr(node.value, scope)
                owner = scope
                while isinstance(owner.node, _COMPREHENSIONS) and owner.parent is not None:
                    owner = owner.parent
                self.bind(node.target.id, owner, node)
            case _:
                self.generic(node, scope)
