"""Imports and aliases -> qualified names, over Python's own `ast`.

One walk over the module (codemods/meaning/scopes.py) records every scope, every binding and every
name load. A name resolves to a qualified name only when every binding of it in the scope that owns
it is an import or a plain alias assignment (`mp = tf.keras.mixed_precision.experimental`) meaning
the same thing; anything else (a local class, a parameter, a loop variable) makes it unknown, so a
local object that merely looks like the TensorFlow name is left alone. Strings and comments are
never names. `same` (the shim target's table.shim_experimental) says which names mean the same
thing there: tf's experimental module is compat_lso.experimental, so a name bound to both resolves
to that. `name = None` (`except ImportError: tf = None`) does not count: every `tf.x.y` fails on
None before and after a rewrite alike. (meaning/values.py follows what this gives up on, for the
sweep.) Not libcst's QualifiedNameProvider: it costs ~9x a libcst parse (docs/performance.md).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterator

from codemods.meaning.scopes import Binding, Scope, Walk
from codemods.table import NEW_POLICY_SOURCES, public_of_private

__all__ = ["Analysis", "Binding", "Scope", "Walk"]


class Analysis:
    """The scopes of one module and the resolution of its names."""

    def __init__(
        self,
        tree: ast.Module,
        same: Callable[[str], str | None] | None = None,
        *,
        walk: Walk | None = None,
    ) -> None:
        """`walk`: the module's walk if another analysis of the same tree made it already."""
        self.tree = tree
        self.same = same  # what a name stands for on the target, if another one (module docstring)
        self.walk = walk = walk if walk is not None else Walk(tree)
        self.module_scope = walk.module_scope
        self.scopes = walk.scopes
        self.scope_of_load = walk.scope_of_load
        self.loads = walk.loads
        # Recorded on the way, in source pre-order (a chain before its parts), so the rules never
        # walk the tree again.
        self.calls = walk.calls
        self.attributes = walk.attributes
        self.imports = walk.imports
        self.import_froms = walk.import_froms
        self.assigns = walk.assigns
        self.annotations = walk.annotations
        self.body_of = walk.body_of
        self._resolving: set[int] = set()
        self._decided: dict[tuple[int, str], Binding | None] = {}
        self._qualified: dict[int, tuple[ast.expr, str | None]] = {}
        self._uses: dict[int, list[ast.Name]] = {}  # id(binding) -> its loads
        self._uses_of_name: set[str] = set()  # the names whose loads are in _uses
        self._loads_by_name: dict[str, list[ast.Name]] | None = None

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
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in self.walk.imported:
            return None  # no import or alias binds it anywhere: a local, a parameter, a builtin
        attrs: list[str] = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        binding = self.binding_of(root)
        if binding is None:
            return None
        base = self.binding_qualified(binding)
        if base is None:
            return None
        return public_of_private(base, ".".join([base, *reversed(attrs)]))

    def bound_to(self, meaning: Callable[[str], bool]) -> frozenset[str]:
        """The names some import or alias, in any scope, binds to a name `meaning` accepts: a load
        of any other name cannot resolve to one."""
        return frozenset(
            binding.name
            for binding in self.walk.import_bindings
            if (qualified := self.binding_qualified(binding)) is not None and meaning(qualified)
        )

    def calls_to(self, callees: Collection[str]) -> Iterator[ast.Call]:
        """The calls whose callee means one of `callees`, in source order."""
        ends = {callee.rpartition(".")[2] for callee in callees}
        for call in self.calls_ending_in(ends):
            if self.qualified(call.func) in callees:
                yield call

    def calls_ending_in(self, ends: Collection[str]) -> Iterator[ast.Call]:
        """The calls, in source order, whose callee can mean a name whose last part is one of
        `ends`: an attribute's meaning ends in its own name (a private name's public one keeps it),
        so a call of an attribute named otherwise is left out without resolving it."""
        for call in self.calls:
            func = call.func
            if type(func) is not ast.Attribute or func.attr in ends:
                yield call

    def is_builtin(self, name: ast.Name) -> bool:
        """Whether a load of e.g. `isinstance` is the builtin (nothing in the module binds it)."""
        scope = self.scope_of_load.get(id(name))
        return scope is not None and self.lookup(name.id, scope) is None

    # -- uses --------------------------------------------------------------------------------------
    def uses(self, binding: Binding) -> list[ast.Name]:
        """Every name load that reads `binding`'s name from the scope that owns it."""
        if self._loads_by_name is None:
            self._loads_by_name = {}
            for load in self.loads:
                self._loads_by_name.setdefault(load.id, []).append(load)
        if binding.name not in self._uses_of_name:  # the loads of one name, once
            self._uses_of_name.add(binding.name)
            for load in self._loads_by_name.get(binding.name, ()):
                for b in self.lookup(load.id, self.scope_of_load[id(load)]) or ():
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
