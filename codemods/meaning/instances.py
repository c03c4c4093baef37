"""Which expressions of one module may hold a loss scale optimizer: the receivers of its members.

Keras 2's loss scale optimizer has members Keras 3's lacks (`loss_scale`, `dynamic_counter`,
`get_scaled_loss`, ...), and TF 2.1-2.3's had `loss_scale()` as a method. Whether a read of one
breaks depends on what its receiver holds, and real code hands the optimizer on: from a function
(`model, opt = build()`), in an attribute (`self.opt = ...`, stored anywhere in the module under
that attribute's name), in a container (a list, tuple or dict literal, `c[k] = v`,
`c.append(v)`), as an argument to a parameter of the module's functions, through tuple
unpacking and loops. `typed(node)` follows all of these back and says what the expression may
hold, as a set of kinds:

- "made": a loss scale optimizer made here (`Typed.calls`: the constructor calls), also when
  rebuilt from its config (`deserialize(serialize(opt))`, `get(opt)`, `X.from_config(...)`,
  whose call stands in for the constructor's where the config is not one made here);
- "other": something else the module knows (a module or class, a literal, an instance of the
  module's own class, what a library call returns when given no loss scale optimizer, except
  `enable_mixed_precision_graph_rewrite(opt)`, which returned one for a Keras `opt`: unknown);
- "unknown": what the module cannot type: a parameter no call here gives, an attribute nothing
  here stores (`model.optimizer`, which compile() may have wrapped), a function of another
  module's result, a method's result on such a value.

Where a receiver is "unknown" and the module makes a loss scale optimizer (`builds_one`), a
Keras 2-only member read on it is at least a finding (the rules' and the sweep's rule alike).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from codemods import table
from codemods.meaning.holders import (
    FUNCTIONS,
    Holders,
    blocks_around,
    index_in,
    key_of,
    own_returns,
)
from codemods.meaning.names import Analysis, Binding
from codemods.meaning.rebuilt import Rebuilt, makes_from_config, rebuilt_by

_MAX_DEPTH = 32
_GRAPH_REWRITE = ".enable_mixed_precision_graph_rewrite"
_LITERALS = (
    ast.Constant,
    ast.JoinedStr,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Lambda,
)


@dataclass(frozen=True)
class Typed:
    kinds: frozenset[str]
    calls: tuple[ast.Call, ...] = ()  # the constructor calls behind "made"

    def __or__(self, other: Typed) -> Typed:
        calls = tuple({id(c): c for c in (*self.calls, *other.calls)}.values())
        return Typed(self.kinds | other.kinds, calls)

    @property
    def made(self) -> bool:
        return "made" in self.kinds


NOTHING = Typed(frozenset())
OTHER = Typed(frozenset({"other"}))
UNKNOWN = Typed(frozenset({"unknown"}))


def _union(parts: Iterable[Typed]) -> Typed:
    found = NOTHING
    for part in parts:
        found = found | part
    return found


class Instances:
    """The loss scale optimizers of one module and where they may be read. `constructors`: the
    qualified names whose call makes one."""

    def __init__(self, names: Analysis, constructors: frozenset[str]) -> None:
        self.names = names
        self.constructors = constructors
        self._active: set[int] = set()
        self._memo: dict[int, Typed] = {}
        self.holders = Holders(names)
        self._arguments: set[int] | None = None

    def builds_one(self) -> bool:
        """Whether the module calls a loss scale optimizer's constructor."""
        return any(
            self.names.qualified(call.func) in self.constructors
            or makes_from_config(call, self.names, self.constructors)
            for call in self.names.calls
        )

    def untyped_may_be_one(self, receiver: ast.expr, typed: Typed) -> bool:
        """Whether a receiver the module cannot type may be a loss scale optimizer: the module
        makes one, and the receiver is no argument of a constructor (`loss_scale=FLAGS.x`)."""
        if "unknown" not in typed.kinds or not self.builds_one():
            return False
        if self._arguments is None:
            # `(<constructor> if loss_scale == "dynamic" else ...)`: a run-time loss_scale as
            # LSO001 writes it on keras3 (codemods/rules/_runtime_scale.py); its test and other
            # branch read the same value.
            choices = {
                id(node.body): [node.test, node.orelse]
                for node in ast.walk(self.names.tree)
                if isinstance(node, ast.IfExp)
            }
            self._arguments = {
                id(inner)
                for call in self.names.calls
                if self.names.qualified(call.func) in self.constructors
                for argument in (*call.args, *call.keywords, *choices.get(id(call), []))
                for inner in ast.walk(argument)
            }
        return id(receiver) not in self._arguments

    def typed(self, node: ast.expr) -> Typed:
        """What `node` may hold; nothing found (a cycle) reads as unknown."""
        found = self._expr(node, 0)
        return found if found.kinds else UNKNOWN

    # -- expressions -------------------------------------------------------------------------------
    def _expr(self, node: ast.expr, depth: int) -> Typed:
        if depth > _MAX_DEPTH or id(node) in self._active:
            return NOTHING
        if id(node) in self._memo:
            return self._memo[id(node)]
        self._active.add(id(node))
        try:
            found = self._compute(node, depth + 1)
        finally:
            self._active.discard(id(node))
        if depth == 0:
            self._memo[id(node)] = found
        return found

    def _compute(self, node: ast.expr, depth: int) -> Typed:
        match node:
            case ast.Name():
                return _union(self._binding(b, depth) for b in self._seen(node))
            case ast.Attribute():
                return self._attribute(node, depth)
            case ast.Subscript():
                return self._elements(node.value, key_of(node.slice), depth)
            case ast.Call():
                return self._call(node, depth)
            case ast.IfExp() if self._graph_rewrite(node.body):
                # LSO008's choice by kind at run time (the TF1 function, else Keras's class): what
                # the graph rewrite call it was written for holds, so that a second run agrees.
                return UNKNOWN
            case ast.IfExp():
                return self._expr(node.body, depth) | self._expr(node.orelse, depth)
            case ast.BoolOp():
                return _union(self._expr(v, depth) for v in node.values)
            case ast.NamedExpr():
                return self._expr(node.value, depth)
            case _ if isinstance(node, _LITERALS):
                return OTHER
        return UNKNOWN

    def _graph_rewrite(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Call) and (self.names.qualified(node.func) or "").endswith(
            _GRAPH_REWRITE
        )

    def _attribute(self, node: ast.Attribute, depth: int) -> Typed:
        if self.names.qualified(node) is not None:
            return OTHER  # a module's member or a class: no instance made here
        stored = self.holders.stores(node.attr)
        if not stored:
            return UNKNOWN
        return _union(self._part(value, index, depth) for value, index in stored)

    def _call(self, call: ast.Call, depth: int) -> Typed:
        func = call.func
        qualified = self.names.qualified(func)
        if qualified in self.constructors:
            return Typed(frozenset({"made"}), (call,))
        rebuilt = rebuilt_by(call, qualified, self.names, self.constructors)
        if rebuilt is not None:
            return self._rebuilt(call, rebuilt, depth)
        defined = self.holders.defined(call)
        if defined:
            return _union(self._returned(d, depth) for d in defined)
        if self._graph_rewrite(call):
            return UNKNOWN  # TF 2.4-2.8 returned a loss scale optimizer for a Keras optimizer
        if (qualified is not None and _known(qualified)) or (
            isinstance(func, ast.Name) and self.names.is_builtin(func)
        ):
            given = [*call.args, *(k.value for k in call.keywords)]
            if any(self._expr(a, depth).made for a in given):
                return UNKNOWN  # a library wrapping one (Horovod's DistributedOptimizer)
            return OTHER
        if isinstance(func, ast.Attribute):  # a method: unknown on what the module cannot type
            receiver = self._expr(func.value, depth)
            return OTHER if receiver.kinds == {"other"} else UNKNOWN
        return UNKNOWN

    def _rebuilt(self, call: ast.Call, rebuilt: Rebuilt, depth: int) -> Typed:
        """What a rebuilt optimizer holds (codemods/meaning/rebuilt.py): what its source holds
        if that is one made here; else the instance's class, a constructor's own (its call
        stands in for the constructor's: its arguments are no constructor's), or for a
        factory what its source may name (any optimizer, unless known to be no optimizer)."""
        source = self._expr(rebuilt.source, depth) if rebuilt.source is not None else NOTHING
        if source.made:
            return source
        if rebuilt.instance is not None:
            instance = self._expr(rebuilt.instance, depth)
            return instance if instance.made else OTHER
        if rebuilt.from_config:
            return Typed(frozenset({"made"}), (call,))
        if rebuilt.factory:
            return OTHER if source.kinds == {"other"} else UNKNOWN
        return UNKNOWN  # a config of something the module cannot type

    def _returned(self, defined: ast.AST, depth: int) -> Typed:
        if isinstance(defined, ast.ClassDef):
            return self._instance_of(defined)
        assert isinstance(defined, FUNCTIONS)
        values = [r.value for r in own_returns(defined) if r.value is not None]
        return _union(self._expr(v, depth) for v in values) if values else OTHER

    def _instance_of(self, cls: ast.ClassDef) -> Typed:
        """An instance of the module's own class: a loss scale optimizer if it subclasses one."""
        if any(self.names.qualified(base) in self.constructors for base in cls.bases):
            return UNKNOWN  # a subclass: made here, but not by a call whose arguments we read
        return OTHER

    # -- containers and tuple unpacking ------------------------------------------------------------
    def _part(self, value: ast.expr, index: int | str | None, depth: int) -> Typed:
        """`value` itself (index None), or its element `index` (tuple unpacking, a subscript)."""
        return self._expr(value, depth) if index is None else self._elements(value, index, depth)

    def _elements(self, container: ast.expr, key: int | str | None, depth: int) -> Typed:
        """What `container[key]` may hold (key None: any element)."""
        if id(container) in self._active or depth > _MAX_DEPTH:
            return NOTHING
        self._active.add(id(container))
        try:
            return self._items(container, key, depth + 1)
        finally:
            self._active.discard(id(container))

    def _items(self, container: ast.expr, key: int | str | None, depth: int) -> Typed:
        match container:
            case ast.List() | ast.Tuple() | ast.Set():
                items = container.elts
                if any(isinstance(e, ast.Starred) for e in items):
                    return _union(self._expr(e, depth) for e in items) | UNKNOWN
                if isinstance(key, int) and -len(items) <= key < len(items):
                    return self._expr(items[key], depth)
                return _union(self._expr(e, depth) for e in items)
            case ast.Dict():
                pairs = list(zip(container.keys, container.values, strict=True))
                chosen = [
                    v
                    for k, v in pairs
                    if key is None or k is None or not isinstance(k, ast.Constant) or k.value == key
                ]
                return _union(self._expr(v, depth) for v in chosen)
            case ast.Name():
                found = _union(self._binding(b, depth, key) for b in self._seen(container))
                added = self.holders.added_to(container)
                return found | _union(self._expr(v, depth) for v in added)
            case ast.Attribute():
                stored = self.holders.stores(container.attr)
                if not stored:
                    return UNKNOWN
                return _union(
                    self._elements(v, key, depth) if i is None else UNKNOWN for v, i in stored
                )
            case ast.Call():
                defined = self.holders.defined(container)
                if not defined:
                    return self._call(container, depth)  # a library's sequence: other or unknown
                return _union(
                    self._elements(r.value, key, depth)
                    for d in defined
                    if isinstance(d, FUNCTIONS)
                    for r in own_returns(d)
                    if r.value is not None
                )
        return self._expr(container, depth)

    # -- names -------------------------------------------------------------------------------------
    def _seen(self, name: ast.Name) -> list[Binding]:
        """The bindings a read may see: in its own scope, those before it back to the last one
        in a block around the read (which every path to the read passes); else every binding (a
        read in a nested function, or before any binding in a loop)."""
        scope = self.names.scope_of_load.get(id(name))
        bindings = self.names.lookup(name.id, scope) if scope is not None else None
        deciding = [b for b in bindings or () if not b.none_fallback]
        at = (name.lineno, name.col_offset)
        before = sorted(
            (
                b
                for b in deciding
                if b.scope is scope
                and b.statement is not None
                and (b.statement.lineno, b.statement.col_offset) < at
            ),
            key=lambda b: (b.statement.lineno, b.statement.col_offset),  # type: ignore[union-attr]
            reverse=True,
        )
        if not before or scope is None:
            return deciding
        around = blocks_around(scope.node, at)
        seen = []
        for binding in before:
            seen.append(binding)
            body = self.names.body_of.get(id(binding.statement))
            if body is not None and id(body) in around:
                break
        return seen

    def _binding(self, binding: Binding, depth: int, key: int | str | None = None) -> Typed:
        """What `binding` gives its name (key: then the element `key` of it)."""
        node, statement = binding.node, binding.statement
        if binding.is_import or isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            return OTHER if key is None else UNKNOWN
        if isinstance(node, ast.arg):
            return self._parameter(binding, depth, key)
        if isinstance(node, ast.NamedExpr):
            return self._part(node.value, key, depth)
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            if not isinstance(node, ast.Name):  # `x = value`
                return self._part(statement.value, key, depth)
            index = index_in(statement, node)  # `a, x = value`
            if index is None or key is not None:
                return UNKNOWN  # starred, nested, or an element of an element: not followed
            return self._elements(statement.value, index, depth)
        if isinstance(statement, (ast.For, ast.AsyncFor)) and statement.target is node:
            return UNKNOWN if key is not None else self._elements(statement.iter, None, depth)
        return UNKNOWN  # `with ... as x`, `except ... as x`, a nested loop target, ...

    def _parameter(self, binding: Binding, depth: int, key: int | str | None) -> Typed:
        """What the calls of its function here (and its default) give a parameter."""
        function, parameter = binding.scope.node, binding.node
        assert isinstance(parameter, ast.arg)
        if not isinstance(function, FUNCTIONS):
            return UNKNOWN  # a lambda's
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        index = next((i for i, p in enumerate(positional) if p is parameter), None)
        owner = binding.scope.parent
        if (
            index == 0
            and owner is not None
            and isinstance(owner.node, ast.ClassDef)
            and not any(getattr(d, "id", "") == "staticmethod" for d in function.decorator_list)
        ):
            return self._instance_of(owner.node) if key is None else UNKNOWN  # self
        given: list[ast.expr] = []
        defaults = arguments.defaults
        if index is not None and index >= len(positional) - len(defaults):
            given.append(defaults[index - (len(positional) - len(defaults))])
        if parameter in arguments.kwonlyargs:
            default = arguments.kw_defaults[arguments.kwonlyargs.index(parameter)]
            if default is not None:
                given.append(default)
        calls = self.holders.calls_of(function)
        complete = bool(calls)  # none: called from elsewhere (a callback), given what it may
        for call, offset in calls:
            at = -1 if index is None else index - offset
            keyword = next((k.value for k in call.keywords if k.arg == parameter.arg), None)
            if keyword is not None:
                given.append(keyword)
            elif 0 <= at < len(call.args) and not any(
                isinstance(a, ast.Starred) for a in call.args[: at + 1]
            ):
                given.append(call.args[at])
            elif any(k.arg is None for k in call.keywords) or any(
                isinstance(a, ast.Starred) for a in call.args
            ):
                complete = False
        found = _union(self._part(v, key, depth) for v in given)
        return found if complete and found.kinds else found | UNKNOWN


def _known(qualified: str) -> bool:
    """A callable of TensorFlow, a known library or the standard library: not the user's."""
    root = qualified.partition(".")[0]
    return root in table.KNOWN_LIBRARIES or root in sys.stdlib_module_names
