"""Imports and aliases -> qualified names, over Python's own `ast`.

One walk over the module records every scope, every binding and every name load. A name resolves
to a qualified name only when every binding of it in the scope that owns it is an import or a
plain alias assignment (`mp = tf.keras.mixed_precision.experimental`) meaning the same thing;
anything else (a local class, a parameter, a loop variable) makes it unknown, so a local object
that merely looks like the TensorFlow name is left alone. Strings and comments are never names.
`same` (the shim target's table.shim_experimental) says which names mean the same thing there:
tf's experimental module is compat_lso.experimental, so a name bound to both resolves to that.
`name = None` (`except ImportError: tf = None`) does not count: every `tf.x.y` fails on None
before and after a rewrite alike. (meaning/values.py follows what this gives up on, for the
sweep.) Not libcst's QualifiedNameProvider: it costs ~9x a libcst parse (docs/performance.md).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from codemods.meaning.shapes import annotations_of, defaults, is_dotted
from codemods.table import NEW_POLICY_SOURCES, public_of_private

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


@dataclass(eq=False)
class Binding:
    """One place that binds a name: an import alias, an assignment, a parameter, a def ..."""

    name: str
    scope: Scope
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


class Analysis:
    """The scopes of one module and the resolution of its names."""

    def __init__(self, tree: ast.Module, same: Callable[[str], str | None] | None = None) -> None:
        self.tree = tree
        self.same = same  # what a name stands for on the target, if another one (module docstring)
        self.module_scope = Scope(tree, None)
        self.scopes: list[Scope] = [self.module_scope]
        self.scope_of_load: dict[int, Scope] = {}  # id(ast.Name) -> the scope it is read in
        self.loads: list[ast.Name] = []
        # Recorded on the way, in source pre-order (a chain before its parts), so the rules never
        # walk the tree again.
        self.calls: list[ast.Call] = []
        self.attributes: list[ast.Attribute] = []
        self.imports: list[ast.Import] = []
        self.import_froms: list[ast.ImportFrom] = []
        self.assigns: list[ast.Assign] = []
        self.body_of: dict[int, list[ast.stmt]] = {}  # id(statement) -> the body list holding it
        self.statement_of: dict[int, ast.stmt] = {}  # id(binding node) -> its statement
        self._resolving: set[int] = set()
        self._decided: dict[tuple[int, str], Binding | None] = {}
        self._qualified: dict[int, tuple[ast.expr, str | None]] = {}
        self._uses: dict[int, list[ast.Name]] | None = None
        _Collector(self).run(tree)

    # -- lookup ------------------------------------------------------------------------------------
    def lookup(self, name: str, scope: Scope) -> list[Binding] | None:
        """The bindings a read of `name` in `scope` can see (LEGB; enclosing classes skipped)."""
        current: Scope | None = scope
        if name in scope.globals:
            current = self.module_scope
        first = True
        while current is not None:
            if (first or not current.is_class) and name in current.bindings:
                return current.bindings[name]
            first = False
            current = current.parent
        return None

    def binding_of(self, name: ast.Name) -> Binding | None:
        """The single import/alias binding a name load resolves through, if it is unambiguous.
        Decided once per scope and name, except while an alias is being followed (a cycle)."""
        scope = self.scope_of_load.get(id(name))
        if scope is None:
            return None
        key = (id(scope), name.id)
        if key in self._decided:
            return self._decided[key]
        decided = self._decide(name.id, scope)
        if not self._resolving:
            self._decided[key] = decided
        return decided

    def _decide(self, name: str, scope: Scope) -> Binding | None:
        bindings = self.lookup(name, scope)
        if not bindings:
            return None
        deciding = [b for b in bindings if not b.none_fallback]
        qualified = {self.binding_qualified(b) for b in deciding}
        if len(qualified) > 1 and None not in qualified and self.same is not None:
            qualified = {self.same(q) or q for q in qualified}  # type: ignore[arg-type]
            deciding = [b for b in deciding if self.binding_qualified(b) in qualified] or deciding
        if len(qualified) != 1 or None in qualified:
            return None
        return deciding[0]

    def binding_qualified(self, binding: Binding) -> str | None:
        if binding.qualified is not None or binding.alias_of is None:
            return binding.qualified
        if id(binding) in self._resolving:  # `x = x.y`: not an alias we can follow
            return None
        self._resolving.add(id(binding))
        try:
            return self.qualified(binding.alias_of)
        finally:
            self._resolving.discard(id(binding))

    def qualified(self, node: ast.expr) -> str | None:
        """`tf.keras.mixed_precision` -> 'tensorflow.keras.mixed_precision', or None. Asked of
        each reference by several rules: kept (with the node, so that its id stays its own)."""
        known = self._qualified.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
        found = self._resolve(node)
        if not self._resolving:
            self._qualified[id(node)] = (node, found)
        return found

    def _resolve(self, node: ast.expr) -> str | None:
        attrs: list[str] = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        binding = self.binding_of(node)
        if binding is None:
            return None
        base = self.binding_qualified(binding)
        if base is None:
            return None
        return public_of_private(base, ".".join([base, *reversed(attrs)]))

    def is_builtin(self, name: ast.Name) -> bool:
        """Whether a load of e.g. `isinstance` is the builtin (nothing in the module binds it)."""
        scope = self.scope_of_load.get(id(name))
        return scope is not None and self.lookup(name.id, scope) is None

    # -- uses --------------------------------------------------------------------------------------
    def uses(self, binding: Binding) -> list[ast.Name]:
        """Every name load that reads `binding`'s name from the scope that owns it."""
        if self._uses is None:
            self._uses = {}
            for load in self.loads:
                found = self.lookup(load.id, self.scope_of_load[id(load)])
                if found:
                    for b in found:
                        self._uses.setdefault(id(b), []).append(load)
        return self._uses.get(id(binding), [])

    def single_value(self, name: ast.Name) -> Binding | None:
        """The binding of `name` if bound exactly once, by `name = <call>`, and read only here."""
        scope = self.scope_of_load.get(id(name))
        bindings = self.lookup(name.id, scope) if scope else None
        if not bindings or len(bindings) != 1 or bindings[0].value is None:
            return None
        if len(self.uses(bindings[0])) != 1:
            return None
        return bindings[0]

    def is_new_policy(self, name: ast.Name) -> bool:
        """Whether this read's binding is a new Policy(...) or global_policy() call."""
        return self._bound_to_a_call_of(name, NEW_POLICY_SOURCES)

    def _bound_to_a_call_of(self, name: ast.Name, callees: frozenset[str]) -> bool:
        scope = self.scope_of_load.get(id(name))
        bindings = self.lookup(name.id, scope) if scope else None
        if not bindings:
            return False
        position = (name.lineno, name.col_offset)
        before = [
            (statement_position, b)
            for b in bindings
            if b.statement is not None
            and (statement_position := (b.statement.lineno, b.statement.col_offset)) < position
        ]
        if not before:
            return False
        _, last = max(before, key=lambda pair: pair[0])
        if not isinstance(last.value, ast.Call):
            return False
        return self.qualified(last.value.func) in callees


class _Collector:
    """The single walk: scopes, bindings, loads, and which body each statement sits in."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
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
        scope.bind(Binding(name, scope, node, self.statement, **kwargs))  # type: ignore[arg-type]

    def stmt(self, node: ast.stmt, scope: Scope) -> None:
        match node:
            case ast.FunctionDef() | ast.AsyncFunctionDef():
                for expr in (
                    *node.decorator_list,
                    *defaults(node.args),
                    node.returns,
                    *annotations_of(node.args),
                ):
                    self.expr(expr, scope)
                self.bind(node.name, scope, node)
                inner = self.scope(node, scope)
                self.arguments(node.args, inner, node)
                self.body(node.body, inner)
            case ast.ClassDef():
                for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                    self.expr(expr, scope)
                self.bind(node.name, scope, node)
                self.body(node.body, self.scope(node, scope, is_class=True))
            case ast.Import():
                self.analysis.imports.append(node)
                for alias in node.names:
                    if alias.asname:
                        self.bind(alias.asname, scope, alias, qualified=alias.name)
                    else:
                        top = alias.name.partition(".")[0]
                        self.bind(top, scope, alias, qualified=top)
            case ast.ImportFrom():
                self.analysis.import_froms.append(node)
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    local = alias.asname or alias.name
                    if node.level or not node.module:
                        self.bind(local, scope, alias)  # relative: not something we migrate
                    else:
                        self.bind(local, scope, alias, qualified=f"{node.module}.{alias.name}")
            case ast.Assign():
                self.analysis.assigns.append(node)
                self.expr(node.value, scope)
                if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    value = node.value
                    chain = value if is_dotted(value) else None
                    self.bind(
                        node.targets[0].id,
                        scope,
                        node,
                        alias_of=chain,
                        value=value if isinstance(value, ast.Call) else None,
                        none_fallback=isinstance(value, ast.Constant) and value.value is None,
                    )
                else:
                    for target in node.targets:
                        self.target(target, scope)
            case ast.Global():
                scope.globals.update(node.names)
            case ast.Nonlocal():
                for name in node.names:  # bound in an enclosing function: never trusted as an alias
                    self.bind(name, scope, node)
            case _:
                self.generic(node, scope)

    def generic(self, node: ast.AST, scope: Scope) -> None:
        for field_name, value in ast.iter_fields(node):
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    self.body(value, scope)
                    continue
                for item in value:
                    if isinstance(item, ast.AST):
                        self.child(item, scope, node, field_name)
            elif isinstance(value, ast.AST):
                self.child(value, scope, node, field_name)

    def child(self, item: ast.AST, scope: Scope, parent: ast.AST, field_name: str) -> None:
        if isinstance(item, ast.expr):
            if field_name in ("target", "optional_vars") or (
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

    def expr(self, node: ast.expr | None, scope: Scope) -> None:
        if node is None:
            return
        match node:
            case ast.Attribute():
                self.analysis.attributes.append(node)
                self.expr(node.value, scope)
            case ast.Call():
                self.analysis.calls.append(node)
                self.generic(node, scope)
            case ast.Name():
                if isinstance(node.ctx, ast.Load):
                    self.analysis.scope_of_load[id(node)] = scope
                    self.analysis.loads.append(node)
                else:
                    self.bind(node.id, scope, node)
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
