"""Whether a `loss_scale` only known at run time may hold a LossScale object, as the module shows.

LSO001 converts such a value where the code runs (codemods/rules/_runtime_scale.py): a number
and 'dynamic' keep their meaning there, a LossScale object has no new spelling and fails. That
conversion is proven only where no value the module shows reaching it can be an object.
`object_source(context, value)` names the first one that can (for a finding's fact line), or
returns None. Followed:

- a name, through every assignment its read may see (codemods/meaning/assignments.py);
- a parameter, through its default and what this module's calls of its function pass;
- a call of a function of this module, through its returns; `a if c else b`, both branches;
- an attribute, through what the module stores in attributes of that name (`self.s = ...`).

What may be an object: a call of anything else (a class or function of another module, such as
a LossScale subclass imported from one: `x = RevisedDynamicLossScale()`; TF's LossScale classes
themselves), an assignment whose value cannot be followed (tuple unpacking of a call). What is
not: a literal, arithmetic, `int()`/`float()`/`str()`/`round()`, and what the module cannot see
at all (a parameter no call here fills, a flag, a subscript, `.get()` of a mapping): the
conversion's error for an object there is the target's own (Keras 2: TypeError at the call).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from codemods.meaning.assignments import Reaching
from codemods.meaning.module import Context
from codemods.meaning.values import own_returns

_MAX_DEPTH = 16
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Builtins whose result is a number or a string, never a LossScale object.
_PLAIN_BUILTINS = frozenset({"int", "float", "str", "round", "abs", "min", "max", "pow"})
# Methods that read a mapping or a config: what they hold is as unseen as a subscript's.
_READS = frozenset({"get", "getattr", "pop", "setdefault"})


@dataclass(frozen=True)
class Source:
    """A call whose result may be a LossScale object, as a fact line names it."""

    written: str  # `RevisedDynamicLossScale()`, `unpacked from get_config()`
    line: int

    def __str__(self) -> str:
        return f"{self.written} at line {self.line}"


def object_source(context: Context, value: ast.expr) -> Source | None:
    """Where a LossScale object may reach `value` (`RevisedDynamicLossScale()` at line 5), or
    None where nothing the module shows can put one there."""
    return _Sources(context).expr(value, 0, set())


class _Sources:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.reaching = Reaching(context)

    def expr(self, node: ast.expr | None, depth: int, seen: set[int]) -> Source | None:
        if node is None or depth > _MAX_DEPTH or id(node) in seen:
            return None
        seen.add(id(node))
        match node:
            case ast.Name():
                return self.name(node, depth, seen)
            case ast.IfExp(body=body, orelse=orelse):
                return self.expr(body, depth + 1, seen) or self.expr(orelse, depth + 1, seen)
            case ast.Attribute():
                return self.stores(node, depth, seen)
            case ast.Call():
                return self.call(node, depth, seen)
            case ast.NamedExpr(value=inner):
                return self.expr(inner, depth + 1, seen)
        return None  # a literal, arithmetic, a subscript, an f-string: a number or unseen

    def name(self, node: ast.Name, depth: int, seen: set[int]) -> Source | None:
        for statement, value, index in self.reaching.of(node):
            if isinstance(statement, ast.arg):
                found = self.parameter(statement, depth, seen)
            elif index != -1 and isinstance(value, ast.Call):
                found = self._where(value, "unpacked from ")
            else:
                found = self.expr(value, depth + 1, seen)
            if found is not None:
                return found
        return None

    def parameter(self, parameter: ast.arg, depth: int, seen: set[int]) -> Source | None:
        function = self.reaching.parent(parameter)
        function = self.reaching.parent(function) if isinstance(function, ast.arguments) else None
        if not isinstance(function, _FUNCTIONS):
            return None
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        passed: list[ast.expr | None] = []
        if parameter in positional:
            index = positional.index(parameter)
            first_default = len(positional) - len(arguments.defaults)
            if index >= first_default:
                passed.append(arguments.defaults[index - first_default])
        elif parameter in arguments.kwonlyargs:
            passed.append(arguments.kw_defaults[arguments.kwonlyargs.index(parameter)])
        for call, offset in self._calls_of(function):
            keyword = next((k.value for k in call.keywords if k.arg == parameter.arg), None)
            if keyword is not None:
                passed.append(keyword)
            elif parameter in positional:
                at = positional.index(parameter) - offset
                if 0 <= at < len(call.args) and not any(
                    isinstance(a, ast.Starred) for a in call.args[: at + 1]
                ):
                    passed.append(call.args[at])
        return next(
            (found for value in passed if (found := self.expr(value, depth + 1, seen))), None
        )

    def call(self, call: ast.Call, depth: int, seen: set[int]) -> Source | None:
        func = call.func
        if (
            isinstance(func, ast.Name)
            and func.id in _PLAIN_BUILTINS
            and self.context.names.is_builtin(func)
        ):
            return None
        if isinstance(func, ast.Attribute) and func.attr in _READS:
            return None
        if isinstance(func, ast.Name) and not self.context.names.is_builtin(func):
            defined = self._function(func)
            if defined is not None:
                return next(
                    (
                        found
                        for statement in own_returns(defined)
                        if (found := self.expr(statement.value, depth + 1, seen))
                    ),
                    None,
                )
        return self._where(call, "")

    def stores(self, node: ast.Attribute, depth: int, seen: set[int]) -> Source | None:
        for statement in ast.walk(self.context.tree):
            if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
                continue
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(t, ast.Attribute) and t.attr == node.attr for t in targets):
                found = self.expr(statement.value, depth + 1, seen)
                if found is not None:
                    return found
        return None

    def _where(self, call: ast.Call, prefix: str) -> Source:
        written = " ".join(self.context.source.segment(call.func).split())
        if len(written) > 30:
            written = written[:27] + "..."
        return Source(f"{prefix}{written}()", call.lineno)

    def _function(self, name: ast.Name) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        scope = self.context.names.scope_of_load.get(id(name))
        bindings = self.context.names.lookup(name.id, scope) if scope is not None else None
        if bindings and len(bindings) == 1 and isinstance(bindings[0].node, _FUNCTIONS):
            return bindings[0].node
        return None

    def _calls_of(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> list[tuple[ast.Call, int]]:
        """This module's calls of `function`, each with the parameters it fills implicitly."""
        found = []
        for call in self.context.names.calls:
            func = call.func
            if isinstance(func, ast.Name) and func.id == function.name:
                if self._function(func) is function:
                    found.append((call, 0))
            elif (
                isinstance(func, ast.Attribute)
                and func.attr == function.name
                and isinstance(func.value, ast.Name)
                and func.value.id in ("self", "cls")
            ):
                found.append((call, 1))
        return found
