"""Version gates and feature detection: the branches of a module that only run on old TensorFlow.

Real code keeps the experimental API alive behind `if version < 2.4:`, `if hasattr(
tf.keras.mixed_precision, "experimental"):`, `getattr(..., "experimental", None)` or
`try: ... except (ImportError, AttributeError):`. Findings on such a branch say so, so that the
user can delete the branch or suppress the line. Built only for modules that have a finding (the
parent map is one walk over the tree).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # context.py asks this module about gates
    from codemods.context import Source

# What makes an `if` test a version or feature check (lower-cased substrings): a name like
# `TF_VERSION`, `tf_version`, `HAS_EXPERIMENTAL`, or an attribute like `tf.__version__`,
# `tf.version.VERSION` (not `tf.config.experimental`, which is no check).
_NAME_WORDS = ("version", "experimental")
_ATTRIBUTE_WORDS = ("version",)
_FEATURE_BUILTINS = frozenset({"hasattr", "getattr"})
_DETECTION_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})


class Gates:
    """Which gate, if any, a node of one tree sits under."""

    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self._parents: dict[int, ast.AST] | None = None

    def parent(self, node: ast.AST) -> ast.AST | None:
        if self._parents is None:
            self._parents = {
                id(child): parent
                for parent in ast.walk(self.tree)
                for child in ast.iter_child_nodes(parent)
            }
        return self._parents.get(id(node))

    def gate(self, node: ast.AST) -> ast.AST | None:
        """The innermost `if`/conditional expression/`try`/getattr-hasattr call gating `node` (a
        `getattr(module, "experimental")` is its own gate)."""
        if _is_feature_call(node):
            return node
        child, parent = node, self.parent(node)
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                if is_gate_test(parent.test):
                    return parent
            elif isinstance(parent, ast.Try) and any(child is s for s in parent.body):
                if any(_catches_detection(h) for h in parent.handlers):
                    return parent
            elif isinstance(parent, ast.ExceptHandler) and _catches_detection(parent):
                return self.parent(parent)
            elif isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
                index = next(i for i, value in enumerate(parent.values) if value is child)
                if any(is_gate_test(value) for value in parent.values[:index]):
                    return parent
            elif _is_feature_call(parent) and child is parent.args[0]:  # type: ignore[attr-defined]
                return parent
            child, parent = parent, self.parent(parent)
        return None

    def describe(self, gate: ast.AST, source: Source) -> str:
        """`if hasattr(tf.keras.mixed_precision, 'experimental')`, shortened to one line."""
        if isinstance(gate, ast.Try):
            handler = next(h for h in gate.handlers if _catches_detection(h))
            assert handler.type is not None
            return f"try/except {_one_line(source.segment(handler.type))}"
        if isinstance(gate, (ast.If, ast.IfExp)):
            return f"if {_one_line(source.segment(gate.test))}"
        if isinstance(gate, ast.BoolOp):
            return _one_line(source.segment(gate))
        assert isinstance(gate, ast.Call)
        return _one_line(source.segment(gate))


def is_gate_test(test: ast.expr) -> bool:
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FEATURE_BUILTINS
        ):
            return True
        if isinstance(node, ast.Name) and any(w in node.id.lower() for w in _NAME_WORDS):
            return True
        if isinstance(node, ast.Attribute) and any(
            w in node.attr.lower() for w in _ATTRIBUTE_WORDS
        ):
            return True
    return False


def _is_feature_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FEATURE_BUILTINS
        and bool(node.args)
    )


def _catches_detection(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    if caught is None:
        return False
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(
        (n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else "")
        in _DETECTION_ERRORS
        for n in names
    )


def _one_line(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
