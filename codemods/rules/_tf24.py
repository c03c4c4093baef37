"""Shared by the rules for TF 2.4-2.15 code on the non-experimental class (LSO011, LSO015-LSO017).

- `bind`: a call's arguments bound to TF 2.4's parameters, and whether the call itself says it is
  TF 2.4 code (`dynamic` passed) or Keras 3 code (`name=`, a number in second place).
- `evidence`: whether the file as a whole is Keras 3 code, which is left alone (see LSO015's note).
- `constructions`: the loss scale optimizers a module builds, whose apply_gradients Keras 3
  changes.
- `parents`: each node's parent, for the rules that follow where a value goes.
- Argument edits that keep the call's layout and comments.

Each analysis is computed once per module and kept beside its Context (weakly, so it goes with it).
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias, TypeVar

from codemods import table
from codemods.meaning.instances import Instances
from codemods.meaning.module import Context
from codemods.meaning.names import Analysis
from codemods.rules import _subclass
from codemods.source import Edit

# A call argument as written: positional (the expression) or by keyword (the whole `name=value`).
Argument: TypeAlias = ast.expr | ast.keyword
Kind: TypeAlias = Literal["tf24", "keras3", "either"]

_T = TypeVar("_T")


def _cached(compute: Callable[[Context], _T]) -> Callable[[Context], _T]:
    cache: weakref.WeakKeyDictionary[Context, _T] = weakref.WeakKeyDictionary()

    def cached(context: Context) -> _T:
        if context not in cache:
            cache[context] = compute(context)
        return cache[context]

    cached.__doc__ = compute.__doc__
    return cached


# -- calls -----------------------------------------------------------------------------------------


@dataclass
class Bound:
    """A LossScaleOptimizer call bound to TF 2.4's parameters."""

    call: ast.Call
    arguments: dict[str, Argument]  # TF 2.4 parameter -> the argument as written
    kind: Kind
    problem: str = ""  # why it cannot be read statically (unpacked, ...); then `arguments` is {}


# The start of Bound.problem for a call TF 2.4's class itself refused (TypeError).
UNEXPECTED = "unexpected arguments"


def value(argument: Argument) -> ast.expr:
    return argument.value if isinstance(argument, ast.keyword) else argument


def is_bool(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, bool)


def is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.BinOp):
        return is_number(node.left) and is_number(node.right)
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    )


def bind(call: ast.Call) -> Bound:
    """Bind `call` to (inner_optimizer, dynamic, initial_scale, dynamic_growth_steps)."""
    keywords = {k.arg: k for k in call.keywords if k.arg is not None}
    second = call.args[1] if len(call.args) > 1 else None
    if "name" in keywords or (second is not None and is_number(second)):
        return Bound(call, {}, "keras3")  # Keras 3's name=, or its positional initial_scale
    kind: Kind = "tf24" if "dynamic" in keywords or is_bool(second) else "either"
    if any(isinstance(a, ast.Starred) for a in call.args) or len(keywords) < len(call.keywords):
        return Bound(call, {}, kind, "the arguments are unpacked with * or **")
    unknown = sorted(set(keywords) - set(table.TF24_PARAMETERS))
    if unknown or len(call.args) > len(table.TF24_PARAMETERS):
        return Bound(call, {}, kind, f"{UNEXPECTED} {unknown or 'beyond TF 2.4 four'}")
    positional: dict[str, Argument] = dict(zip(table.TF24_PARAMETERS, call.args, strict=False))
    if set(positional) & set(keywords):
        return Bound(call, {}, kind, "an argument is given twice")
    return Bound(call, {**positional, **keywords}, kind)


# -- the file --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    tf24: bool  # something only the TF 2.4 API has (or the experimental API)
    keras3: bool  # something only Keras 3's API has

    @property
    def keras3_code(self) -> bool:
        """Keras 3 code: left alone on every target (moving it would change its meaning)."""
        return self.keras3 and not self.tf24


@_cached
def evidence(context: Context) -> Evidence:
    """What the file as a whole is written for (LSO015's note says how it is decided)."""
    tf24 = keras3 = False
    for call in context.names.calls:
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr in table.TF24_MARKERS:
                tf24 = True
            elif func.attr in table.KERAS3_MARKERS:
                keras3 = True
        if any(k.arg in table.KERAS3_MARKERS for k in call.keywords):
            keras3 = True
        if not (
            isinstance(func, ast.Name)
            or (isinstance(func, ast.Attribute) and func.attr in table.MEMBER_NAMES)
        ):
            continue
        qualified = context.qualified(func)
        if qualified in table.TF24_LSO:
            kind = bind(call).kind
            tf24 |= kind == "tf24"
            keras3 |= kind == "keras3"
        elif qualified in table.KERAS3_ONLY_LSO:
            keras3 = True
        elif qualified is not None and table.classify(qualified) is not None:
            tf24 = True  # the experimental API: old code
    for attribute in context.names.attributes:
        if attribute.attr in table.TF24_MARKERS:
            tf24 = True
        elif attribute.attr in table.KERAS3_MARKERS:
            keras3 = True
    return Evidence(tf24, keras3)


_TF_KERAS_CODE: weakref.WeakKeyDictionary[Analysis, bool] = weakref.WeakKeyDictionary()


def tf_keras_code(names: Analysis) -> bool:
    """Code on tf_keras's loss scale optimizer: the module names the class, and only through
    tf_keras, which keeps Keras 2's class on every TensorFlow (left alone on every target).
    Asked by several rules per module: computed once per analysis."""
    if names not in _TF_KERAS_CODE:
        _TF_KERAS_CODE[names] = _tf_keras_code(names)
    return _TF_KERAS_CODE[names]


def _tf_keras_code(names: Analysis) -> bool:
    # A reference's meaning ends in its own last part, an attribute's name or the last part of
    # what an import or alias binds (a private name's public one keeps it: tested in
    # tests/codemods/test_codemod_sweep_table.py): only those that can be the class are resolved.
    ending = ".LossScaleOptimizer"
    bound = names.bound_to(lambda qualified: qualified.endswith(ending))
    named = {
        qualified
        for node in names.attributes
        if node.attr == ending[1:] and (qualified := names.qualified(node))
    } | {
        qualified
        for node in names.loads
        if node.id in bound and (qualified := names.qualified(node)) and qualified.endswith(ending)
    }
    return bool(named) and all(q.startswith("tf_keras.") for q in named)


def call_kind(context: Context, bound: Bound) -> Literal["tf24", "keras3"]:
    """The call's own kind, or the file's where the call says neither."""
    if bound.kind == "either":
        return "keras3" if evidence(context).keras3_code else "tf24"
    return bound.kind


# -- where values go -------------------------------------------------------------------------------


def parent(context: Context, node: ast.AST) -> ast.AST | None:
    return context.parent(node)


@_cached
def instances(context: Context) -> Instances:
    """What each expression of the module may hold: a loss scale optimizer made here, or not."""
    return Instances(context.names, table.ANY_LSO)


def bound_call(context: Context, name: ast.Name) -> ast.Call | None:
    """The call `name` was last bound to, in the same scope, before this read (None if unknown)."""
    names = context.names
    scope = names.scope_of_load.get(id(name))
    bindings = names.lookup(name.id, scope) if scope else None
    if not bindings:
        return None
    position = (name.lineno, name.col_offset)
    before = [
        ((b.statement.lineno, b.statement.col_offset), b)
        for b in bindings
        if b.statement is not None and (b.statement.lineno, b.statement.col_offset) < position
    ]
    if not before:
        return None
    last = max(before, key=lambda pair: pair[0])[1]
    return last.value if isinstance(last.value, ast.Call) else None


def tensorflow_name(context: Context, at: ast.Name) -> str | None:
    """A name that reads `tensorflow` where `at` is read (`tf` for `import tensorflow as tf`)."""
    names = context.names
    scope = names.scope_of_load.get(id(at))
    if scope is None:
        return None
    candidates = {
        b.name
        for s in names.scopes
        for bs in s.bindings.values()
        for b in bs
        if b.is_import and b.qualified == "tensorflow"
    }
    for candidate in sorted(candidates):
        bindings = names.lookup(candidate, scope)
        if bindings and all(b.is_import and b.qualified == "tensorflow" for b in bindings):
            return candidate
    return None


# -- argument edits --------------------------------------------------------------------------------


def _ordered(call: ast.Call) -> list[Argument]:
    return sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))


def remove_arguments(context: Context, call: ast.Call, removed: list[Argument]) -> list[Edit]:
    """Remove arguments (never the first) with one comma each; the rest of the call keeps its
    layout, and comments stay unless they sit between removed arguments."""
    source = context.source
    ordered = _ordered(call)
    gone = {id(a) for a in removed}
    edits = []
    index = 0
    while index < len(ordered):
        if id(ordered[index]) not in gone:
            index += 1
            continue
        first = index
        while index < len(ordered) and id(ordered[index]) in gone:
            index += 1
        start = source.span(ordered[first])[0]
        if index < len(ordered):  # up to the next kept argument
            edits.append(Edit(start, source.span(ordered[index])[0], ""))
            continue
        previous_end = source.span(ordered[first - 1])[1]
        end = source.span(ordered[index - 1])[1]
        if "#" not in source.text[previous_end:start]:
            edits.append(Edit(previous_end, end, ""))  # `, last` at the end
            continue
        # A comment after the previous argument: keep it, remove the arguments' own lines.
        line_start = source.text.rfind("\n", 0, start) + 1
        after = source.text[end : source.text.find("\n", end) + 1 or len(source.text)]
        if not source.text[line_start:start].strip() and after.lstrip(" \t,").startswith("\n"):
            edits.append(Edit(line_start, end + len(after), ""))
        else:
            comma = end + 1 if source.text[end : end + 1] == "," else end
            edits.append(Edit(start, comma, ""))
    return edits


def append_keyword(context: Context, call: ast.Call, keyword: str) -> tuple[int, str]:
    """Where, and what, to insert so that `call` gets `keyword` (`name=value`) last."""
    source = context.source
    _, call_end = source.span(call)
    closing = call_end - 1  # the `)`
    ordered = _ordered(call)
    if not ordered:
        return closing, keyword
    last_end = source.span(ordered[-1])[1]
    comma = _comma_in(source.text[last_end:closing])
    if comma is None:
        return last_end, f", {keyword}"
    return last_end + comma + 1, f" {keyword},"


def _comma_in(between: str) -> int | None:
    """The offset of the trailing comma in the text between a call's last argument and `)`."""
    in_comment = False
    for index, character in enumerate(between):
        if character == "#":
            in_comment = True
        elif character in "\r\n":
            in_comment = False
        elif character == "," and not in_comment:
            return index
    return None


LSO_CLASSES = (
    table.TF24_LSO
    | table.OLD_LSO
    | table.NEW_LSO
    | table.KERAS3_ONLY_LSO
    | {table.SHIM_LSO, table.SHIM_EXPERIMENTAL_LSO}
)


def constructions(context: Context) -> list[ast.Call]:
    """The loss scale optimizers the module builds: its classes derived from one included
    (codemods/rules/_subclass.py), even named LossScaleOptimizer."""
    built = [
        call
        for call in context.names.calls
        if isinstance(call.func, (ast.Name, ast.Attribute))
        and getattr(call.func, "attr", getattr(call.func, "id", "")) == "LossScaleOptimizer"
        and keras_class(context.qualified(call.func))
    ]
    derived = [call for call, kind in _subclass.constructions(context) if keras_class(kind.base)]
    return sorted([*built, *derived], key=lambda call: (call.lineno, call.col_offset))


def keras_class(qualified: str | None) -> bool:
    """A loss scale optimizer class whose apply_gradients Keras 3 changes: not tf_keras's, which
    keeps Keras 2's on every target."""
    return qualified in LSO_CLASSES and not qualified.startswith("tf_keras.")
