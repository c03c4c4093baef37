"""Version gates and feature detection: the branches of a module that only run on old TensorFlow.

Real code keeps the experimental API alive behind `if version < 2.4:`, `if hasattr(
tf.keras.mixed_precision, "experimental"):`, `getattr(..., "experimental", None)` or
`try: ... except (ImportError, AttributeError):`. Findings on such a branch say so, so that the
user can delete the branch or suppress the line. Built only for modules that have a finding (the
parent map is one walk over the tree).

A name like `use_experimental_api` is no gate where the module shows it to be a flag its code or
its caller sets (a parameter, a literal True/False, a setting read from an attribute): TensorFlow's
version does not decide it, and deleting its branch would take a choice away from the caller.
Findings there say `branch of flag ...` instead (`flag`, `flag_suffix`), and are no LSO104.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from codemods import table
from codemods.meaning.dead_branches import Verdict, decide
from codemods.meaning.names import Analysis
from codemods.source import Source, one_line, parent_map

# What makes an `if` test a version or feature check (lower-cased substrings): a name like
# `TF_VERSION`, `tf_version`, `HAS_EXPERIMENTAL`, or an attribute like `tf.__version__`,
# `tf.version.VERSION` (not `tf.config.experimental`, which is no check).
_NAME_WORDS = ("version", "experimental")
_ATTRIBUTE_WORDS = ("version",)
# A flag that spells a TF version (`IS_PREV_TF_2_4_0`, `TF2`, `is_tf1`), often another module's
# (`compat.IS_TF2`): a version gate the codemod cannot decide, never a caller's choice.
_TF_VERSION_FLAG = re.compile(r"(?:^|_)tf_?v?\d", re.IGNORECASE)
_FEATURE_BUILTINS = frozenset({"hasattr", "getattr"})
_DETECTION_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})
# Members of Keras 2's loss scale optimizer that a feature test asks for (the table's, but
# `dynamic`, a word too common to say the test is about that class).
_KERAS2_MEMBERS = frozenset(table.KERAS2_GUARDED_MEMBERS) - {"dynamic"}


class Gates:
    """Which gate, if any, a node of one tree sits under, and its parents.

    Parents are found by descending from the module through the children whose source span holds
    the node (a few siblings per level) rather than by mapping every node of the tree, which costs
    a walk of the whole module: the sweep asks about a handful of nodes in modules of thousands.
    """

    def __init__(self, tree: ast.Module, names: Analysis | None = None) -> None:
        self.tree = tree
        self.names = names  # to decide version tests (`dead`); None: no branch is dead
        self._parents: dict[int, ast.AST] = {}
        self._everything: bool = False

    def parent(self, node: ast.AST) -> ast.AST | None:
        if node is self.tree:
            return None
        if id(node) not in self._parents and not self._everything:
            path = self._path(node)
            if path is None:  # positions that do not nest (never seen): map the whole tree
                self._parents.update(parent_map(self.tree))
                self._everything = True
            else:
                for parent, child in zip(path, [*path[1:], node], strict=True):
                    self._parents[id(child)] = parent
        return self._parents.get(id(node))

    def _path(self, node: ast.AST) -> list[ast.AST] | None:
        """The ancestors of `node`, the module first; None when the spans do not lead to it.

        Depth first through every child whose span holds the node's (siblings can share a span:
        the parts of an f-string on Python 3.11 all carry the whole string's).
        """
        target = _span(node)
        if target is None:
            return None
        return _path_to(self.tree, node, target)

    def gate(self, node: ast.AST) -> ast.AST | None:
        """The innermost `if`/conditional expression/`try`/getattr-hasattr call gating `node` (a
        `getattr(module, "experimental")` is its own gate)."""
        if _is_feature_call(node):
            return node
        child, parent = node, self.parent(node)
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                if self._is_gate(parent.test):
                    return parent
            elif isinstance(parent, ast.Try) and any(child is s for s in parent.body):
                if any(_catches_detection(h) for h in parent.handlers):
                    return parent
            elif isinstance(parent, ast.ExceptHandler) and _catches_detection(parent):
                return self.parent(parent)
            elif isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
                index = next(i for i, value in enumerate(parent.values) if value is child)
                if any(self._is_gate(value) for value in parent.values[:index]):
                    return parent
            elif _is_feature_call(parent) and child is parent.args[0]:  # type: ignore[attr-defined]
                return parent
            child, parent = parent, self.parent(parent)
        return None

    def _is_gate(self, test: ast.expr) -> bool:
        return is_gate_test(test) and self._flag_of(test) is None

    def _flag_of(self, test: ast.expr) -> ast.Name | None:
        """The caller's flag a test reads, where that is all that makes it look like a gate: its
        gate words are names with `experimental` in them, each of which the module binds only as
        a parameter, a literal True/False/None or a value read from an attribute or a subscript
        (a setting); None otherwise (no names to tell: the test stays a gate)."""
        if self.names is None:
            return None
        flags: list[ast.Name] = []
        for node in ast.walk(test):
            if isinstance(node, ast.Call) and _is_feature_call(node):
                return None
            if isinstance(node, ast.Attribute) and _spells_version(node.attr, _ATTRIBUTE_WORDS):
                return None
            if isinstance(node, ast.Name) and _TF_VERSION_FLAG.search(node.id):
                return None
            if isinstance(node, ast.Name) and any(w in node.id.lower() for w in _NAME_WORDS):
                if "version" in node.id.lower() or not self._set_by_caller(node):
                    return None
                flags.append(node)
        return flags[0] if flags else None

    def _set_by_caller(self, name: ast.Name) -> bool:
        assert self.names is not None
        scope = self.names.scope_of_load.get(id(name))
        bindings = self.names.lookup(name.id, scope) if scope is not None else None
        if not bindings:
            return False
        for binding in bindings:
            if isinstance(binding.node, ast.arg):
                continue
            node = binding.node
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.Constant) and value.value in (True, False, None):
                continue
            if isinstance(value, (ast.Attribute, ast.Subscript)) and not any(
                "version" in n.lower() or n in _FEATURE_BUILTINS
                for n in (getattr(x, "attr", getattr(x, "id", "")) for x in ast.walk(value))
            ):
                continue
            return False
        return True

    def flag(self, node: ast.AST) -> tuple[ast.stmt | ast.expr, ast.Name] | None:
        """The innermost `if` (conditional expression, `and`/`or`) on a caller's flag that holds
        `node`, with the flag; None where there is none."""
        child, parent = node, self.parent(node)
        while parent is not None:
            tests: list[ast.expr] = []
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                tests = [parent.test]
            elif isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
                index = next(i for i, value in enumerate(parent.values) if value is child)
                tests = parent.values[:index]
            for test in tests:
                flag = self._flag_of(test) if is_gate_test(test) else None
                if flag is not None:
                    assert isinstance(parent, (ast.stmt, ast.expr))
                    return parent, flag
            child, parent = parent, self.parent(parent)
        return None

    def flag_suffix(self, node: ast.AST, line: int) -> str:
        """` (branch of flag `use_experimental_api`, line 5)` where a caller's flag holds `node`,
        else ''."""
        found = self.flag(node)
        if found is None:
            return ""
        holder, flag = found
        return f" ({self._branch(node, holder)} flag `{flag.id}`, line {line})"

    def dead(self, node: ast.AST) -> tuple[ast.stmt | ast.expr, Verdict] | None:
        """The `if` (conditional expression, `and`/`or`) whose test, the same on every supported
        TensorFlow (codemods/meaning/dead_branches.py), never lets `node` run; None where it may."""
        if self.names is None:
            return None
        child, parent = node, self.parent(node)
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                verdict = decide(parent.test, self.names)
                in_body = (
                    child is parent.body
                    if isinstance(parent, ast.IfExp)
                    else any(child is s for s in parent.body)
                )
                if verdict is not None and verdict.value is not in_body:
                    return parent, verdict
            elif isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
                settles = isinstance(parent.op, ast.Or)  # the value that skips what follows
                index = next(i for i, value in enumerate(parent.values) if value is child)
                for value in parent.values[:index]:
                    verdict = decide(value, self.names)
                    if verdict is not None and verdict.value is settles:
                        return parent, verdict
            child, parent = parent, self.parent(parent)
        return None

    def dead_note(
        self, node: ast.AST, source: Source, line_of: Callable[[ast.stmt | ast.expr], int]
    ) -> tuple[str, str] | None:
        """For a node in a branch no supported TensorFlow runs: what its finding's fact ends with
        and its help (a note: nothing breaks); None where the branch may run. `line_of`: the
        line a finding names for a node."""
        found = self.dead(node)
        if found is None:
            return None
        gate, verdict = found
        line = line_of(gate)
        return (
            f" ({self._branch(node, gate)} line {line}, dead on TF >= 2.12: kept as written)",
            f"only {verdict.other} runs this branch: delete it once you no longer support "
            f"{verdict.other}",
        )

    def suffix(self, gate: ast.AST, source: Source, line: int, node: ast.AST | None = None) -> str:
        """What a finding under `gate` ends with: ` (branch of `if tf.__version__...`, line 3)`,
        ` (else branch of ...)`: which branch `node` is in, and the gate. What to do about such a
        branch is said once, by --explain."""
        described = _shortened(self.describe(gate, source))
        where = "under" if node is None else self._branch(node, gate)
        return f" ({where} `{described}`, line {line})"

    def _branch(self, node: ast.AST, gate: ast.AST) -> str:
        """Which part of `gate` holds `node`, in words: 'branch of', 'else branch of', ..."""
        child: ast.AST | None = node
        while child is not None and self.parent(child) is not gate:
            child = self.parent(child)
        if isinstance(gate, ast.If):
            return "else branch of" if any(child is s for s in gate.orelse) else "branch of"
        if isinstance(gate, ast.IfExp):
            return "else branch of" if child is gate.orelse else "branch of"
        if isinstance(gate, ast.Try):
            return "try branch of" if any(child is s for s in gate.body) else "except branch of"
        if isinstance(gate, ast.BoolOp):
            return "guarded by"
        return "feature detection"

    def describe(self, gate: ast.AST, source: Source) -> str:
        """`if hasattr(tf.keras.mixed_precision, 'experimental')`, shortened to one line."""
        if isinstance(gate, ast.Try):
            handler = next(h for h in gate.handlers if _catches_detection(h))
            assert handler.type is not None
            return f"try/except {one_line(source.segment(handler.type), 70)}"
        if isinstance(gate, (ast.If, ast.IfExp)):
            return f"if {one_line(source.segment(gate.test), 70)}"
        if isinstance(gate, ast.BoolOp):
            return one_line(source.segment(gate), 70)
        assert isinstance(gate, ast.Call)
        return one_line(source.segment(gate), 70)


def _path_to(current: ast.AST, node: ast.AST, target: Span) -> list[ast.AST] | None:
    """Gates._path's search (a module function: a nested recursive one is a reference cycle that
    only the cycle collector frees, holding the node)."""
    for child in ast.iter_child_nodes(current):
        if child is node:
            return [current]
        span = _span(child)
        if span is not None and span[0] <= target[0] and target[1] <= span[1]:
            below = _path_to(child, node, target)
            if below is not None:
                return [current, *below]
    return None


def _shortened(described: str) -> str:
    return described if len(described) <= 28 else described[:25] + "..."


def is_gate_test(test: ast.expr) -> bool:
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FEATURE_BUILTINS
            and not _asks_for_a_member(node)
        ):
            return True
        if isinstance(node, ast.Name) and _spells_version(node.id, _NAME_WORDS):
            return True
        if isinstance(node, ast.Attribute) and _spells_version(node.attr, _ATTRIBUTE_WORDS):
            return True
    return False


def _spells_version(name: str, words: tuple[str, ...]) -> bool:
    return any(w in name.lower() for w in words) or _TF_VERSION_FLAG.search(name) is not None


Span = tuple[tuple[int, int], tuple[int, int]]


def _span(node: ast.AST) -> Span | None:
    """Where a node's source starts and ends (decorators included); for the nodes without a
    position (arguments, comprehension, withitem, match_case), the span of what they hold."""
    lineno = getattr(node, "lineno", None)
    end_lineno = getattr(node, "end_lineno", None)
    if lineno is not None and end_lineno is not None:
        start = (lineno, getattr(node, "col_offset", 0))
        for decorator in getattr(node, "decorator_list", ()):
            start = min(start, (decorator.lineno, decorator.col_offset))
        return start, (end_lineno, getattr(node, "end_col_offset", 0))
    spans = [span for child in ast.iter_child_nodes(node) if (span := _span(child)) is not None]
    if not spans:
        return None
    return min(s for s, _ in spans), max(e for _, e in spans)


def _is_feature_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FEATURE_BUILTINS
        and bool(node.args)
        and not _asks_for_a_member(node)
    )


def _asks_for_a_member(call: ast.Call) -> bool:
    """`hasattr(opt, "get_scaled_loss")`: a member of Keras 2's loss scale optimizer, which TF
    2.4-2.15 has (Keras 3 does not): a check for Keras 2's class, not for TF < 2.4."""
    name = call.args[1] if len(call.args) > 1 else None
    return isinstance(name, ast.Constant) and name.value in _KERAS2_MEMBERS


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
