"""Loss-scaling names an output still spells, resolved against the installed TensorFlow.

`--check` promises that whatever the target lacks and stays in the output has a finding at its
line. `codemods.guarantee.unreported` asks the codemod's own sweep that question; this asks the
installed TensorFlow instead, independently of the codemod's tables: every dotted name in the
output that starts from an import of `tensorflow`, `keras` or `tf_keras` and names a
loss-scaling thing (`mixed_precision`, `LossScale...`, `loss_scale...`, the graph rewrite) is
imported and looked up attribute by attribute. One that does not resolve is a removed name; with no
manual finding or note in its statement, it is left silent.

Only targets the installed TensorFlow serves are resolved: `shim` always (with
`compat_lso.install()` active for a file that calls it, as the shim's output does), `keras3` where
`tf.keras` is Keras 3, `keras2` where it is Keras 2 (TF <= 2.15, or TF_USE_LEGACY_KERAS=1).
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

ROOTS = ("tensorflow", "keras", "tf_keras")
_WORDS = re.compile(r"mixed_precision|LossScale|loss_scale|graph_rewrite")


@dataclass(frozen=True)
class Reference:
    line: int  # 1-based, in the text given
    first: int  # the enclosing statement's first and last lines: a finding there covers it
    last: int
    name: str  # dotted, from the imported module: `tensorflow.keras.mixed_precision.experimental`


def references(text: str) -> list[Reference]:
    """The loss-scaling names `text` spells from an import of one of ROOTS (raises SyntaxError
    when it does not parse). A name also bound another way in the scope of a use or around it
    (an assignment, a parameter) is left out there: what it holds is not known without running
    the code."""
    tree = ast.parse(text)
    aliases = _aliases(tree)
    found: dict[tuple[int, str], Reference] = {}
    for statement, node, shadowed in _walk(tree):
        first, last = statement.lineno, statement.end_lineno or statement.lineno
        for line, name in _names(node, aliases, shadowed):
            if _WORDS.search(name):
                found.setdefault((line, name), Reference(line, first, last, name))
    # `tf.keras.mixed_precision.X` also walks past `tf.keras.mixed_precision`: keep the longest.
    longest = [
        r
        for r in found.values()
        if not any(o.line == r.line and o.name.startswith(r.name + ".") for o in found.values())
    ]
    return sorted(longest, key=lambda r: (r.line, r.name))


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Each name an import of ROOTS binds, and the module or attribute it stands for."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ROOTS:
                    bound = alias.asname or alias.name.split(".")[0]
                    aliases[bound] = alias.name if alias.asname else bound
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] in ROOTS
        ):
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _bound(scope: ast.AST) -> set[str]:
    """The names a scope binds other than by import: assignments, parameters, definitions (not
    those of the scopes nested in it)."""
    names: set[str] = set()
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        names |= {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)}
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if isinstance(node, _SCOPES):
            if not isinstance(node, ast.Lambda):
                names.add(node.name)
            continue
        if not isinstance(node, ast.arguments):
            stack.extend(ast.iter_child_nodes(node))
    return names


def _walk(tree: ast.Module) -> Iterator[tuple[ast.stmt, ast.AST, frozenset[str]]]:
    """Every node, with the innermost statement that holds it and the names bound other than by
    import in its scope and the scopes around it."""
    top = frozenset(_bound(tree))
    stack: list[tuple[ast.stmt, ast.AST, frozenset[str]]] = [
        (s, s, top) for s in reversed(tree.body)
    ]
    while stack:
        statement, node, shadowed = stack.pop()
        yield statement, node, shadowed
        inner = shadowed | _bound(node) if isinstance(node, _SCOPES) else shadowed
        for child in reversed(list(ast.iter_child_nodes(node))):
            stack.append((child if isinstance(child, ast.stmt) else statement, child, inner))


def _names(
    node: ast.AST, aliases: dict[str, str], shadowed: frozenset[str]
) -> Iterator[tuple[int, str]]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] in ROOTS:
                yield node.lineno, alias.name
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module.split(".")[0] in ROOTS:
            for alias in node.names:
                star = alias.name == "*"
                yield node.lineno, node.module if star else f"{node.module}.{alias.name}"
    elif isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Load):
        chain = _chain(node)
        if chain and chain[0] in aliases and chain[0] not in shadowed:
            yield node.lineno, ".".join([aliases[chain[0]], *chain[1:]])


def _chain(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"], for the outermost attribute of a chain only (its inner
    attributes are the same chain, shorter)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


class Resolver:
    """Looks names up in the installed TensorFlow, with and without `compat_lso.install()`."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, bool], bool] = {}
        try:
            import tensorflow as tf
        except ImportError:
            self.keras: str | None = None
            return
        major = str(getattr(tf.keras, "__version__", "2")).split(".")[0]
        self.keras = "keras3" if major.isdigit() and int(major) >= 3 else "keras2"
        self.tensorflow = tf.__version__

    def targets(self) -> tuple[str, ...]:
        """The targets whose output this TensorFlow can judge."""
        return () if self.keras is None else (self.keras, "shim")

    def resolves(self, name: str, *, installed: bool) -> bool:
        key = (name, installed)
        if key not in self._cache:
            if installed:
                import compat_lso

                compat_lso.install()
                try:
                    self._cache[key] = _lookup(name)
                finally:
                    compat_lso.uninstall()
            else:
                self._cache[key] = _lookup(name)
        return self._cache[key]


def _lookup(name: str) -> bool:
    """Whether `name` imports, or is an attribute chain from an importable module. A root that is
    not installed (`keras` next to tf_keras, say) cannot be judged here: counted as resolving."""
    parts = name.split(".")
    try:
        value: object = importlib.import_module(parts[0])
    except ImportError:
        return True
    for index in range(1, len(parts)):
        try:
            value = getattr(value, parts[index])
            continue
        except Exception:
            pass
        try:
            value = importlib.import_module(".".join(parts[: index + 1]))
        except Exception:
            return False
    return True
