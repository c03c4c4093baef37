"""A class of the module derived from a loss scale optimizer class (LSO003, LSO016, LSO022).

A name bound to such a class follows the user's class, not TensorFlow's even where it is spelled
the same (`class LossScaleOptimizer(mixed_precision.experimental.LossScaleOptimizer)` shadows the
name): each call of it builds the user's class, with its base's constructor where no class on the
way defines `__init__`, so the old signature stays in play at every construction the subclass
finding's port must reach. And on Keras 3 what its body reads of Keras 2's class (`self._optimizer`,
`self.loss_scale`: table.KERAS2_ONLY_MEMBERS) fails with AttributeError once its base is Keras 3's.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass

from codemods import table
from codemods.meaning.module import Context
from codemods.source import one_line

_MAX_DEPTH = 16
_CONSTRUCTIONS: weakref.WeakKeyDictionary[Context, list[tuple[ast.Call, Derived]]] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class Derived:
    """A class of the module and the loss scale optimizer class it derives from."""

    cls: ast.ClassDef
    base: str  # qualified: the experimental class, TF 2.4's, ...
    own_init: bool  # it, or a class of the module between it and `base`, defines __init__


def derived(context: Context, cls: ast.ClassDef) -> Derived | None:
    """`cls` as a loss scale optimizer class, where one of its bases is one (directly or through
    other classes of the module)."""
    return _derived(context, cls, 0)


def _derived(context: Context, cls: ast.ClassDef, depth: int) -> Derived | None:
    own = any(
        isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        and statement.name == "__init__"
        for statement in cls.body
    )
    for base in cls.bases:
        qualified = context.qualified(base)
        if qualified in table.ANY_LSO:
            return Derived(cls, qualified, own)
        defined = class_of(context, base) if isinstance(base, ast.Name) else None
        if defined is not None and defined is not cls and depth < _MAX_DEPTH:
            found = _derived(context, defined, depth + 1)
            if found is not None:
                return Derived(cls, found.base, own or found.own_init)
    return None


def class_of(context: Context, name: ast.Name) -> ast.ClassDef | None:
    """The class of the module a name is bound to, where that is its one binding."""
    scope = context.names.scope_of_load.get(id(name))
    bindings = context.names.lookup(name.id, scope) if scope is not None else None
    if bindings and len(bindings) == 1 and isinstance(bindings[0].node, ast.ClassDef):
        return bindings[0].node
    return None


def constructions(context: Context) -> list[tuple[ast.Call, Derived]]:
    """The calls that build a class of the module derived from a loss scale optimizer class."""
    if context in _CONSTRUCTIONS:
        return _CONSTRUCTIONS[context]
    found = []
    for call in context.names.calls:
        if not isinstance(call.func, ast.Name):
            continue
        cls = class_of(context, call.func)
        kind = derived(context, cls) if cls is not None else None
        if kind is not None:
            found.append((call, kind))
    _CONSTRUCTIONS[context] = found
    return found


def base_of(context: Context, call: ast.Call) -> str | None:
    """The loss scale optimizer class the class `call` builds derives from, if it is one here."""
    return next((kind.base for found, kind in constructions(context) if found is call), None)


def keras2_reads(cls: ast.ClassDef) -> list[str]:
    """What the class body reads of Keras 2's loss scale optimizer that Keras 3's lacks, in the
    order first read: `self.X` (unless the class sets or defines X itself) and `super().X`
    (table.KERAS2_ONLY_MEMBERS)."""
    own = {
        node.attr
        for node in ast.walk(cls)
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load)
    } | {
        statement.name
        for statement in cls.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    found: dict[str, None] = {}
    for node in ast.walk(cls):
        if not isinstance(node, ast.Attribute) or node.attr not in table.KERAS2_ONLY_MEMBERS:
            continue
        if node.attr in own and not _is_super(node.value):
            continue  # the class's own: what it sets or defines itself
        receiver = node.value
        if (isinstance(receiver, ast.Name) and receiver.id == "self") or _is_super(receiver):
            found.setdefault(node.attr)
    return sorted(found, key=lambda attr: _first(cls, attr))


def _is_super(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def _first(cls: ast.ClassDef, attr: str) -> tuple[int, int]:
    return min(
        (node.lineno, node.col_offset)
        for node in ast.walk(cls)
        if isinstance(node, ast.Attribute) and node.attr == attr
    )


def lacks(reads: list[str]) -> str:
    """`_optimizer (Keras 3: inner_optimizer), loss_scale`, for a finding's help."""
    return ", ".join(
        f"{attr} (Keras 3: {table.KERAS2_ONLY_MEMBERS[attr]})"
        if table.KERAS2_ONLY_MEMBERS[attr]
        else attr
        for attr in reads
    )


def help_for(reads: list[str]) -> str:
    """A subclass finding's help on keras3 where its body reads what Keras 3's class lacks."""
    return one_line(f"adapt it to Keras 3's class, which lacks what it reads: {lacks(reads)}", 150)
