"""What breaks on the target in one migrated module: the sweep's detection.

Every reference is resolved the way the rules resolve it (codemods/meaning/names.py) and checked
against codemods/table/: a name the target lacks (`table.gone`), a member it lacks
(REMOVED_MEMBERS), a call it reads differently (UNSUPPORTED_CALLS). Where strict resolution
gives up, codemods/meaning/values.py follows the value (only when a removed name is there at all),
and a chain that spells a removed path on a root the codemod cannot resolve (`tf` as a parameter) or
the old constructor's signature on one is flagged too. Each `Flag` is worded lazily by
codemods/sweep/wording.py: most flags are covered by a rule's own finding and never need words.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import cached_property

from codemods import table
from codemods.meaning.instances import Instances
from codemods.meaning.values import Flow, Origin
from codemods.rules._tf24 import is_number, tf_keras_code
from codemods.source import Located
from codemods.sweep.migrated import Swept
from codemods.sweep.wording import Explained, Explainer
from codemods.table import Reason

_OLD_SIGNATURE = "LossScaleOptimizer"


class Flag:
    """A reference in the migrated module that breaks on the target. `code` (the sweep's code it
    is reported under), `message` (the fact), `help` (the fix) and `reason` (why it stays manual)
    are worked out when first asked for."""

    def __init__(
        self, node: Located, natural: str | None, explain: Callable[[], Explained]
    ) -> None:
        self.node = node
        self.natural = natural  # the rule code the name falls under (suppression, --skip)
        self._explain = explain

    @cached_property
    def _explained(self) -> Explained:
        return self._explain()

    @property
    def code(self) -> str:
        return self._explained[0]

    @property
    def message(self) -> str:
        return self._explained[1]

    @property
    def help(self) -> str:
        return self._explained[2]

    @property
    def reason(self) -> Reason:
        """Why it stays manual (codemods/table/reasons.py), one word."""
        return self._explained[3]

    def note(self, swept: Swept) -> bool:
        """Whether no supported TensorFlow runs the branch that holds the node: a note, not
        manual work (codemods/meaning/dead_branches.py)."""
        return self.code == "LSO104" and swept.gates.dead(self.node) is not None


def find(swept: Swept) -> list[Flag]:
    """Every flag of the module, in source order."""
    return _Finder(swept).run()


class _Finder:
    def __init__(self, swept: Swept) -> None:
        self.swept = swept
        self.names = swept.names
        self.target = swept.target
        self.flags: dict[int, Flag] = {}
        self.traced: list[tuple[ast.expr, list[Origin]]] = []  # uses followed by the flow
        self.explain = Explainer(swept, self.traced)

    def run(self) -> list[Flag]:
        names = self.names
        unresolved: list[ast.Attribute | ast.Name] = []
        self._imports()
        inner = {id(a.value) for a in names.attributes}
        removed_roots = self._removed_roots()
        references: list[ast.Attribute | ast.Name] = [*names.attributes, *names.loads]
        candidates: list[ast.Attribute | ast.Name] = [
            *names.attributes,
            *(load for load in names.loads if load.id in removed_roots),  # (see _may_be_removed)
        ]
        for node in candidates:
            if id(node) in inner or id(node) in self.flags or not isinstance(node.ctx, ast.Load):
                continue
            if not _may_be_removed(node, removed_roots):
                continue  # only the flow can find a removed value here (below)
            qualified = names.qualified(node)
            if qualified is None:
                unresolved.append(node)
                continue
            found = table.gone(qualified, self.target)
            if found is not None and not self._only_tested(node):
                self._add(node, found.code, self.explain.removed, node, qualified, found)
        self._members()
        self._calls()
        if self.flags:  # a removed name is here: follow it where strict resolution gave up
            unspelled = [
                node
                for node in references
                if id(node) not in inner
                and isinstance(node.ctx, ast.Load)
                and not _may_be_removed(node, removed_roots)
            ]
            flow = Flow(names, self.swept.gates, self.swept.gone)
            flow.taint(flag.node for flag in self.flags.values())
            for node in [*unresolved, *unspelled]:
                if id(node) not in flow.tainted or id(node) in self.flags:
                    continue
                origins = [o for o in flow.origins(node) if self.swept.gone(o.qualified)]
                if origins and not self._only_tested(node):
                    self.traced.append((node, origins))
                    found = table.gone(origins[0].qualified, self.target)
                    code = found.code if found is not None else None
                    self._add(node, code, self.explain.followed, node, origins)
        for node in unresolved:
            if id(node) not in self.flags:
                self._spelled(node)
        self._old_signature_calls()
        return sorted(self.flags.values(), key=lambda f: (f.node.lineno, f.node.col_offset))

    def _add(
        self,
        node: Located,
        natural: str | None,
        explain: Callable[..., Explained],
        *arguments: object,
    ) -> None:
        self.flags.setdefault(id(node), Flag(node, natural, lambda: explain(*arguments)))

    def _removed_roots(self) -> frozenset[str]:
        """Names bound somewhere, by an import or alias, to a removed name (`mp`, `LSO`)."""
        return self.names.bound_to(self.swept.gone)

    def _only_tested(self, node: ast.expr) -> bool:
        """`x is None`, `x is not None`, `if x:`, `not x`: a test of a name, not a use of it."""
        if not isinstance(node, ast.Name):
            return False
        parent = self.swept.gates.parent(node)
        if isinstance(parent, ast.Compare):
            return all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops) and all(
                isinstance(o, ast.Constant) and o.value is None for o in parent.comparators
            )
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            return parent.test is node
        return isinstance(parent, ast.BoolOp) or (
            isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
        )

    def _imports(self) -> None:
        """Import statements naming a removed module or member fail at import time."""
        for statement in self.names.imports:
            for alias in statement.names:
                found = table.gone(alias.name, self.target)
                if found is not None:
                    self._add(alias, found.code, self.explain.removed, alias, alias.name, found)
        for from_import in self.names.import_froms:
            module = from_import.module
            if from_import.level or not module:
                continue
            for alias in from_import.names:
                imported = module if alias.name == "*" else f"{module}.{alias.name}"
                found = table.gone(imported, self.target)
                if found is not None:
                    self._add(alias, found.code, self.explain.removed, alias, imported, found)

    def _members(self) -> None:
        members: dict[str, list[table.RemovedMember]] = {}
        for member in table.REMOVED_MEMBERS[self.target]:
            members.setdefault(member.name, []).append(member)
        if not members:
            return
        called = {id(call.func) for call in self.names.calls}
        keras2 = tf_keras_code(self.names)  # tf_keras's class keeps Keras 2's members
        for node in self.names.attributes:
            for member in members.get(node.attr, ()):
                if member.called and id(node) not in called:
                    continue
                if keras2 and member.receiver != "policy" and not member.called:
                    continue
                if member.receiver != "any" and not self._receiver_is(member, node.value):
                    continue
                self._add(node, member.code, self.explain.member, node, member)

    def _receiver_is(self, member: table.RemovedMember, receiver: ast.expr) -> bool:
        if member.receiver == "policy":
            return isinstance(receiver, ast.Name) and self.names.is_new_policy(receiver)
        typed = self.instances.typed(receiver)
        return typed.made or (member.untyped and self.instances.untyped_may_be_one(receiver, typed))

    @cached_property
    def instances(self) -> Instances:
        return Instances(self.names, table.ANY_LSO)

    def _calls(self) -> None:
        """`getattr(module, "name")` of a removed name, and calls the target reads differently."""
        limits = table.UNSUPPORTED_CALLS[self.target]
        ends = {callee.rpartition(".")[2] for limit in limits for callee in limit.callees}
        for call in self.names.calls_ending_in(ends):  # (getattr is a name: always among them)
            func = call.func
            if (
                isinstance(func, ast.Name)
                and func.id == "getattr"
                and len(call.args) >= 2
                and isinstance(call.args[1], ast.Constant)
                and isinstance(call.args[1].value, str)
                and self.names.is_builtin(func)
            ):
                base = self.names.qualified(call.args[0])
                if base is not None:
                    qualified = f"{base}.{call.args[1].value}"
                    found = table.gone(qualified, self.target)
                    if found is not None:
                        self._add(call, found.code, self.explain.removed, call, qualified, found)
                continue
            if not limits or id(call) in self.flags:
                continue
            callee = self.names.qualified(func)
            if callee is None:
                continue
            for limit in limits:
                if callee in limit.callees:
                    problem = _call_problem(call, limit)
                    if problem is not None:
                        self._add(call, limit.code, self.explain.call, call, callee, limit, problem)
                        break

    def _spelled(self, node: ast.Attribute | ast.Name) -> None:
        """`tf.keras.mixed_precision.experimental.X` on a `tf` the codemod cannot resolve (a
        parameter, a name bound more than one way): what it spells, if it is TensorFlow."""
        attrs: list[str] = []
        root: ast.expr = node
        while isinstance(root, ast.Attribute):
            attrs.append(root.attr)
            root = root.value
        if "experimental" not in attrs or not isinstance(root, ast.Name):
            return
        parts = [root.id, *reversed(attrs)]
        at = next(
            (
                i
                for i in range(len(parts) - 1)
                if parts[i : i + 2] == ["mixed_precision", "experimental"]
            ),
            None,
        )
        if root.id == "tf":
            holder, assumed, rest = "tf", "tensorflow", parts[1:]
        elif at is not None:  # `mixed_precision.experimental` on anything: Keras's, by its name
            holder, assumed = ".".join(parts[: at + 1]), "tensorflow.keras.mixed_precision"
            rest = parts[at + 1 :]
        else:
            holder, assumed, rest = root.id, root.id, parts[1:]
        qualified = ".".join([assumed, *rest])
        found = table.gone(qualified, self.target)
        if found is not None:
            self._add(
                node, found.code, self.explain.spelled, node, root, holder, assumed, qualified
            )

    def _old_signature_calls(self) -> None:
        """`<x>.LossScaleOptimizer(opt, loss_scale=...)` on an `x` the codemod cannot resolve: the
        old class's signature, whatever `x` is (the new class takes no loss_scale)."""
        for call in self.names.calls:
            func = call.func
            if not isinstance(func, ast.Attribute) or func.attr != _OLD_SIGNATURE:
                continue
            if id(call) in self.flags or id(func) in self.flags:
                continue
            second = call.args[1] if len(call.args) > 1 else None
            if not (
                any(k.arg == "loss_scale" for k in call.keywords)
                or (isinstance(second, ast.Constant) and second.value == "dynamic")
            ):
                continue
            if self.names.qualified(func) is None:
                self._add(call, "LSO001", self.explain.old_signature, call, func)


# Every removed name has one of these among the attributes a chain spells it with, unless its
# root name itself is bound to a removed name (the table's block says the same).
_SPELLED_WITH: frozenset[str] = frozenset(
    {
        "experimental",
        *(
            part
            for entries in table.REMOVED_NAMES.values()
            for entry in entries
            for part in entry.prefix.split(".")[1:]
        ),
    }
)


def _may_be_removed(node: ast.Attribute | ast.Name, removed_roots: frozenset[str]) -> bool:
    """A syntactic test that spares resolving the many chains that cannot name a removed name:
    one spelled with an attribute of a removed path, or rooted at a name bound to one."""
    while isinstance(node, ast.Attribute):
        if node.attr in _SPELLED_WITH:
            return True
        node = node.value  # type: ignore[assignment]
    return isinstance(node, ast.Name) and node.id in removed_roots


def _call_problem(call: ast.Call, limit: table.UnsupportedCall) -> str | None:
    for keyword in call.keywords:
        if keyword.arg in limit.keywords:
            accepted = limit.keywords[keyword.arg]
            value = keyword.value
            if not (accepted and isinstance(value, ast.Constant) and value.value in accepted):
                return f"{keyword.arg}=..."
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if limit.numeric_second_is_native and len(positional) > 1 and is_number(positional[1]):
        return None
    if limit.max_positional is not None and len(positional) > limit.max_positional:
        return f"{len(positional)} positional arguments"
    return None
