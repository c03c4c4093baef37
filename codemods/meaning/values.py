"""What an expression may hold where strict resolution gives up; for the sweep's findings only.

Strict resolution (codemods/meaning/names.py) gives a name a meaning only when every binding of it
agrees, and the rules rewrite only what it decides. A removed module or class still reaches uses
by other ways, and the sweep must see those and say how:

- a name bound more than one way (`if ...: mp = <old> else: mp = <new>`, a fallback import);
- an attribute it was stored in (`self._mixed_precision = tf.keras.mixed_precision.experimental`,
  matched by the attribute's name anywhere in the module: the codemod cannot know the object);
- a parameter of a function of this module that a call here passes it to (or its default);
- the result of a call of a function of this module that returns it, and `getattr(x, "name")`.

Two passes keep this cheap in modules of thousands of lines: `taint` goes forward from the
removed names found (a handful) to every expression their value may reach, and only those are
then asked `origins`, which goes back to say how the value got there. Every answer is an
`Origin`: a qualified name the expression may hold and the hops that made it unfollowable.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Literal

from codemods.meaning.names import Analysis, Binding
from codemods.meaning.version_gates import Gates

Via = Literal["strict", "bound", "parameter", "attribute", "return", "getattr"]
_MAX_DEPTH = 24
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Origin:
    qualified: str  # what the expression may hold
    via: Via  # the hop the codemod cannot follow ("strict": none)
    node: ast.AST  # where that hop happens: the binding, the store, the return, the call argument
    holder: str  # the name, attribute or function that carries it
    value: str = ""  # what that hop carries (`qualified` without the attributes read after it)
    trail: tuple[int, ...] = ()  # id() of every hop's node on the way, the first one first

    def __post_init__(self) -> None:
        if not self.value:
            object.__setattr__(self, "value", self.qualified)
        if not self.trail:
            object.__setattr__(self, "trail", (id(self.node),))

    def member(self, attr: str) -> Origin:
        return replace(self, qualified=f"{self.qualified}.{attr}")

    def hop(self, via: Via, node: ast.AST, holder: str, qualified: str = "") -> Origin:
        """The same value, carried one step further (by a binding, a call, a store)."""
        qualified = qualified or self.qualified
        return Origin(qualified, via, node, holder, qualified, (*self.trail, id(node)))


class Flow:
    """Where the removed values of one module go (`taint`), and how they got somewhere
    (`origins`); `keep` says which qualified names are worth tracking (the removed ones)."""

    def __init__(self, names: Analysis, gates: Gates, keep: Callable[[str], bool]) -> None:
        self.names = names
        self.gates = gates
        self.keep = keep
        self.tainted: set[int] = set()  # id() of the expressions a removed value may reach
        self._stored: list[ast.Assign | ast.AnnAssign] = []  # `x.attr = <tainted>`
        self._active: set[int] = set()
        self._bindings: dict[int, list[Origin]] = {}
        self._returns: dict[int, list[Origin]] = {}
        self._stores: dict[str, list[Origin]] | None = None
        self._calls: dict[str, list[ast.Call]] | None = None
        self._binding_of_node: dict[int, Binding] | None = None
        self._attribute_loads: dict[str, list[ast.Attribute]] | None = None

    # -- forward: where removed values go ----------------------------------------------------------
    def taint(self, sources: Iterable[ast.AST]) -> None:
        """Mark every expression a value of `sources` (references and import aliases of removed
        names) may reach: through aliases, attributes stored to, arguments, returns, getattr."""
        work = list(sources)
        while work:
            node = work.pop()
            if id(node) in self.tainted:
                continue
            self.tainted.add(id(node))
            if isinstance(node, ast.alias):
                work.extend(self._uses_of_node(node))
                continue
            parent = self.gates.parent(node)
            if isinstance(parent, ast.keyword):
                node, parent = parent, self.gates.parent(parent)
            work.extend(self._reached(node, parent))

    def _reached(self, node: ast.AST, parent: ast.AST | None) -> list[ast.AST]:
        """What a value at `node` reaches in one step, given where `node` sits."""
        if isinstance(parent, (ast.Attribute, ast.IfExp, ast.BoolOp, ast.NamedExpr)):
            reached: list[ast.AST] = [parent]
            if isinstance(parent, ast.NamedExpr):
                reached += self._uses_of_node(parent)
            return reached
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            reached = []
            for target in targets:
                if isinstance(target, ast.Name):
                    reached += self._uses_of_node(parent) + self._uses_of_node(target)
                elif isinstance(target, ast.Attribute):
                    self._stored.append(parent)
                    reached += self.attribute_loads().get(target.attr, [])
            return reached
        if isinstance(parent, ast.Call) and parent.func is not node:
            if _is_getattr(parent, self.names) and parent.args and parent.args[0] is node:
                return [parent]
            return [
                use
                for function, offset in self._callees(parent)
                for parameter in _parameters_given(function, parent, node, offset)
                for use in self._uses_of_node(parameter)
            ]
        if isinstance(parent, ast.Return):
            function = self._function_of(parent)
            if function is not None:
                return [call for call, _ in self._calls_of(function)]
        return []

    def _uses_of_node(self, node: ast.AST) -> list[ast.Name]:
        if self._binding_of_node is None:
            self._binding_of_node = {
                id(binding.node): binding
                for scope in self.names.scopes
                for bindings in scope.bindings.values()
                for binding in bindings
            }
        binding = self._binding_of_node.get(id(node))
        return self.names.uses(binding) if binding is not None else []

    def attribute_loads(self) -> dict[str, list[ast.Attribute]]:
        if self._attribute_loads is None:
            self._attribute_loads = {}
            for attribute in self.names.attributes:
                if isinstance(attribute.ctx, ast.Load):
                    self._attribute_loads.setdefault(attribute.attr, []).append(attribute)
        return self._attribute_loads

    def _callees(self, call: ast.Call) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, int]]:
        """The functions of this module a call may call, each with the parameters it fills
        implicitly (1 for `self.method(...)`)."""
        func = call.func
        if isinstance(func, ast.Name):
            scope = self.names.scope_of_load.get(id(func))
            bindings = self.names.lookup(func.id, scope) if scope is not None else None
            return [(b.node, 0) for b in bindings or () if isinstance(b.node, _FUNCTIONS)]
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            return [
                (b.node, 1)
                for scope in self.names.scopes
                if scope.is_class
                for b in scope.bindings.get(func.attr, ())
                if isinstance(b.node, _FUNCTIONS)
            ]
        return []

    def _function_of(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        parent = self.gates.parent(node)
        while parent is not None and not isinstance(parent, (*_FUNCTIONS, ast.Lambda)):
            parent = self.gates.parent(parent)
        return parent if isinstance(parent, _FUNCTIONS) else None

    # -- backward: how a value got here ------------------------------------------------------------
    def origins(self, node: ast.expr, depth: int = 0) -> list[Origin]:
        if depth > _MAX_DEPTH or id(node) in self._active:
            return []
        self._active.add(id(node))
        try:
            if isinstance(node, ast.Name):
                return self._name(node, depth)
            if isinstance(node, ast.Attribute):
                found = [o.member(node.attr) for o in self.origins(node.value, depth + 1)]
                return found + self.stores().get(node.attr, [])
            if isinstance(node, ast.Call):
                return self._call(node, depth)
            return []
        finally:
            self._active.discard(id(node))

    # -- names -------------------------------------------------------------------------------------
    def _name(self, name: ast.Name, depth: int) -> list[Origin]:
        qualified = self.names.qualified(name)
        if qualified is not None:
            return [Origin(qualified, "strict", name, name.id)]
        scope = self.names.scope_of_load.get(id(name))
        bindings = self.names.lookup(name.id, scope) if scope is not None else None
        deciding = [b for b in bindings or () if not b.none_fallback]
        found: list[Origin] = []
        for binding in deciding:
            for origin in self._binding(binding, depth):
                several = origin.via == "strict" and len(deciding) > 1
                found.append(origin.hop("bound", origin.node, name.id) if several else origin)
        return found

    def _binding(self, binding: Binding, depth: int) -> list[Origin]:
        if id(binding) in self._bindings:
            return self._bindings[id(binding)]
        self._bindings[id(binding)] = []  # a cycle through this binding adds nothing
        found: list[Origin] = []
        where = binding.node if binding.is_import else binding.statement or binding.node
        if binding.is_import:
            qualified = self.names.binding_qualified(binding)
            if qualified is not None:
                found = [Origin(qualified, "strict", where, binding.name)]
        elif binding.alias_of is not None or binding.value is not None:
            value = binding.alias_of if binding.alias_of is not None else binding.value
            assert value is not None
            found = [
                o if o.via != "strict" else o.hop("strict", where, binding.name)
                for o in self.origins(value, depth + 1)
            ]
        elif isinstance(binding.node, ast.arg) and isinstance(binding.scope.node, _FUNCTIONS):
            found = self._parameter(binding.node, binding.scope.node, depth)
        self._bindings[id(binding)] = found
        return found

    # -- parameters --------------------------------------------------------------------------------
    def _parameter(
        self, parameter: ast.arg, function: ast.FunctionDef | ast.AsyncFunctionDef, depth: int
    ) -> list[Origin]:
        """What the calls of `function` in this module (and its default) pass to `parameter`."""
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        index = next((i for i, p in enumerate(positional) if p is parameter), None)
        passed: list[ast.expr] = []
        if index is not None:
            first_default = len(positional) - len(arguments.defaults)
            if index >= first_default:
                passed.append(arguments.defaults[index - first_default])
        elif parameter in arguments.kwonlyargs:
            default = arguments.kw_defaults[arguments.kwonlyargs.index(parameter)]
            if default is not None:
                passed.append(default)
        for call, offset in self._calls_of(function):
            keyword = next((k.value for k in call.keywords if k.arg == parameter.arg), None)
            if keyword is not None:
                passed.append(keyword)
            elif index is not None and index >= offset:
                at = index - offset
                before = call.args[: at + 1]
                if at < len(call.args) and not any(isinstance(a, ast.Starred) for a in before):
                    passed.append(call.args[at])
        return [
            o.hop("parameter", value, f"{parameter.arg} (of {function.name}())")
            for value in passed
            for o in self.origins(value, depth + 1)
        ]

    def _calls_of(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> Iterator[tuple[ast.Call, int]]:
        """Each call of `function` here, and how many leading parameters it fills implicitly."""
        if self._calls is None:
            self._calls = {}
            for call in self.names.calls:
                func = call.func
                name = (
                    func.id
                    if isinstance(func, ast.Name)
                    else func.attr
                    if isinstance(func, ast.Attribute)
                    else None
                )
                if name is not None:
                    self._calls.setdefault(name, []).append(call)
        for call in self._calls.get(function.name, []):
            func = call.func
            if isinstance(func, ast.Name):
                scope = self.names.scope_of_load.get(id(func))
                bindings = self.names.lookup(func.id, scope) if scope is not None else None
                if bindings and any(b.node is function for b in bindings):
                    yield call, 0
            elif (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in ("self", "cls")
            ):
                # `self.method(...)`: the method of this module's class of that name, probably.
                yield call, 1

    # -- calls and attributes ----------------------------------------------------------------------
    def _call(self, call: ast.Call, depth: int) -> list[Origin]:
        func = call.func
        if not isinstance(func, ast.Name):
            return []
        if _is_getattr(call, self.names):
            constant = call.args[1]
            assert isinstance(constant, ast.Constant) and isinstance(constant.value, str)
            attribute: str = constant.value
            return [
                o.hop("getattr", call, o.holder, f"{o.qualified}.{attribute}")
                for o in self.origins(call.args[0], depth + 1)
            ]
        scope = self.names.scope_of_load.get(id(func))
        bindings = self.names.lookup(func.id, scope) if scope is not None else None
        return [
            origin
            for binding in bindings or ()
            if isinstance(binding.node, _FUNCTIONS)
            for origin in self._returned(binding.node, depth)
        ]

    def _returned(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, depth: int
    ) -> list[Origin]:
        if id(function) in self._returns:
            return self._returns[id(function)]
        self._returns[id(function)] = []
        found = [
            o.hop("return", statement, f"{function.name}()")
            for statement in own_returns(function)
            if statement.value is not None
            for o in self.origins(statement.value, depth + 1)
        ]
        self._returns[id(function)] = found
        return found

    def stores(self) -> dict[str, list[Origin]]:
        """Attribute name -> what is stored in an attribute of that name (`x.attr = <removed>`),
        from the stores `taint` saw."""
        if self._stores is not None:
            return self._stores
        self._stores = {}  # while it is being built, a store read inside a store adds nothing
        table: dict[str, list[Origin]] = {}
        for statement in self._stored:
            value = statement.value
            assert value is not None
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            kept = [o for o in self.origins(value) if self.keep(o.qualified)]
            for target in targets:
                if isinstance(target, ast.Attribute):
                    holder = ast.unparse(target)
                    table.setdefault(target.attr, []).extend(
                        o.hop("attribute", statement, holder) for o in kept
                    )
        self._stores = table
        return table


def _is_getattr(call: ast.Call, names: Analysis) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Name)
        and func.id == "getattr"
        and names.is_builtin(func)
        and len(call.args) >= 2
        and isinstance(call.args[1], ast.Constant)
        and isinstance(call.args[1].value, str)
    )


def _parameters_given(
    function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, given: ast.AST, offset: int
) -> list[ast.arg]:
    """The parameter of `function` that `given` (an argument or keyword of `call`) fills."""
    arguments = function.args
    if isinstance(given, ast.keyword):
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        return [p for p in every if p.arg == given.arg]
    if given not in call.args:
        return []
    index = call.args.index(given)  # type: ignore[arg-type]
    if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return []
    positional = [*arguments.posonlyargs, *arguments.args]
    at = index + offset
    return [positional[at]] if at < len(positional) else []


def own_returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Return]:
    """The function's own `return` statements (not those of functions or classes inside it)."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
