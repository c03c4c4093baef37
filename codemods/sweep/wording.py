"""How each break the sweep finds is coded and worded: what the reference is used for decides.

A removed name bound by an import or alias that stays is LSO101 (it fails at import time), one
handed on (returned, passed, stored) is LSO103, one used through a binding the codemod cannot
follow is LSO102, anything else left is LSO100 (a gap in the rules), and any of them under a
version gate or feature detection is LSO104, which the user can suppress per line. Each flag is a
fact and a help (what to do), one short line each, with line numbers of the original text; the
reasoning is the rule's, said once by `--explain CODE`.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.values import Origin
from codemods.source import Located, one_line
from codemods.sweep.migrated import Swept
from codemods.table import Reason, display

# (sweep code, fact, help, why it stays manual): each one short line, the last one word.
Explained = tuple[str, str, str, Reason]

# Where a removed name used as a value goes somewhere the codemod cannot follow.
_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Starred)


class Explainer:
    def __init__(self, swept: Swept, traced: list[tuple[ast.expr, list[Origin]]]) -> None:
        self.swept = swept
        self.target = swept.target
        self.gates = swept.gates
        self.traced = traced  # filled by the finder before any flag is explained
        self._bindings: dict[int, object] | None = None

    # -- one method per kind of flag ---------------------------------------------------------------
    def removed(self, node: Located, qualified: str, found: table.Gone) -> Explained:
        """A reference that resolves, strictly, to a removed name."""
        shown = table.brief(qualified)
        what = (
            f"{shown} {found.reason}"
            if found.name == table.canonical(qualified)
            else f"{shown}: {display(found.name)} {found.reason}"
        )
        use, escape = self._use(node)
        change = users_must(qualified, self.target)
        if use:
            gated = self._gated(node, f"{use}{shown}", change, "follows")
            if gated is not None:
                return gated
            return self._kept(node, use, shown, found.reason)
        gated = self._gated(node, what, change, "no-equivalent")
        if gated is not None:
            return gated
        if escape is not None:
            users = self._users_of(node)
            return (
                "LSO103",
                f"{what}; it escapes ({escape})",
                (f"change its users ({users}): {change}" if users else change),
                "elsewhere",
            )
        return "LSO100", f"{what}; no rule rewrote or reported it", change, "limit"

    def member(self, node: ast.Attribute, member: table.RemovedMember) -> Explained:
        written = self.swept.out.segment(node) + ("()" if member.called else "")
        subject = f"`{one_line(written)}`: {member.name} {member.reason}"
        if self.target in member.help:
            change = member.help[self.target]
            return self._gated(node, subject, change, "no-equivalent") or (
                "LSO100",
                subject,
                change,
                "no-equivalent",
            )
        return self._plain(node, subject, member.code)

    def call(
        self, call: ast.Call, callee: str, limit: table.UnsupportedCall, problem: str
    ) -> Explained:
        return self._plain(call, f"{display(callee)}({problem}) {limit.reason}", limit.code)

    def followed(self, node: ast.expr, origins: list[Origin]) -> Explained:
        """A use whose value the flow analysis traced to a removed name."""
        first = origins[0]
        written = one_line(self.swept.out.segment(node), 40)
        hows = "; ".join(dict.fromkeys(self._how(o, written) for o in origins))
        subject = f"`{written}` may hold {display(first.qualified)} ({hows})"
        change = users_must(first.qualified, self.target)
        return self._gated(node, subject, change, "elsewhere") or (
            "LSO102",
            subject,
            change,
            "elsewhere",
        )

    def spelled(
        self, node: ast.expr, root: ast.Name, holder: str, assumed: str, qualified: str
    ) -> Explained:
        written = one_line(self.swept.out.segment(node), 40)
        binds = self._what_binds(root)
        subject = (
            # The full name ends with what is written: say it once (a fact line stays short).
            f"{display(qualified)} through `{root.id}`, which is {binds}"
            if display(qualified).endswith("." + written)
            else f"`{written}` spells {display(qualified)}; {root.id} is {binds}"
        )
        change = users_must(qualified, self.target)
        return self._gated(node, subject, change, "elsewhere") or (
            "LSO102",
            subject,
            f"if {holder} is {display(assumed)}: {change}",
            "elsewhere",
        )

    def old_signature(self, call: ast.Call, func: ast.Attribute) -> Explained:
        root: ast.expr = func
        while isinstance(root, ast.Attribute):
            root = root.value
        holder = (
            f"{root.id} is {self._what_binds(root)}"
            if isinstance(root, ast.Name)
            else "its receiver is computed"
        )
        subject = (
            f"`{one_line(self.swept.out.segment(func), 40)}(..., loss_scale)`: the old "
            f"LossScaleOptimizer's signature; {holder}"
        )
        change = table.RULES_BY_CODE["LSO001"].instruction
        return self._gated(call, subject, change, "elsewhere") or (
            "LSO102",
            subject,
            change,
            "elsewhere",
        )

    # -- shared wording ----------------------------------------------------------------------------
    def _plain(self, node: Located, subject: str, code: str | None) -> Explained:
        change = table.RULES_BY_CODE[code or "LSO100"].instruction_on(self.target)
        return self._gated(node, subject, change, "no-equivalent") or (
            "LSO100",
            subject,
            change,
            "no-equivalent",
        )

    def _gated(self, node: Located, subject: str, change: str, reason: Reason) -> Explained | None:
        """LSO104 when a version gate or feature detection holds `node`: the fact says which
        branch and where the gate is; the help says to delete the branch or suppress the line.
        In a branch no supported TensorFlow runs, the fact says so and the help when to delete it
        (`Flag.note`: a note, nothing breaks). `reason`: why the place would stay manual
        outside the branch; inside one, the branch is why (`gated`), except for a note."""
        dead = self.gates.dead_note(node, self.swept.out, self.swept.line)
        if dead is not None:
            fact, advice = dead
            return "LSO104", subject + fact, advice, reason
        gate = self.gates.gate(node)
        if gate is None:
            return None
        assert isinstance(gate, (ast.stmt, ast.expr))
        where = self.gates.suffix(gate, self.swept.out, self.swept.line(gate), node)
        return "LSO104", subject + where, table.RULES_BY_CODE["LSO104"].instruction, "gated"

    def _how(self, origin: Origin, written: str) -> str:
        """How the value got there, in a few words (--explain LSO102 says why that stops the
        codemod); the holder is named where it is not what the line reads."""
        line = self.swept.line(origin.node)
        holder = "" if origin.holder == written else f"{origin.holder} "
        if origin.via == "bound":
            return f"{holder}bound more than one way, line {line}"
        if origin.via == "parameter":
            return f"parameter {holder}given it at line {line}"
        if origin.via == "attribute":
            return f"attribute {holder}set at line {line}"
        if origin.via == "return":
            return f"returned by {origin.holder} at line {line}"
        if origin.via == "getattr":
            return f"getattr() at line {line}"
        return f"bound at line {line}"

    def _use(self, node: Located) -> tuple[str, str | None]:
        """('import of ' / 'alias x of ', None) for a binding, else ('', how it escapes or None)."""
        out = self.swept.out
        parent = self.gates.parent(node)
        if isinstance(node, ast.alias):
            return "import of ", None
        if isinstance(parent, ast.NamedExpr):
            return f"alias {parent.target.id} of ", None
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return f"alias {targets[0].id} of ", None
            return "", "stored in " + ", ".join(one_line(out.segment(t)) for t in targets)
        if isinstance(parent, ast.keyword):
            parent = self.gates.parent(parent)
        if isinstance(parent, ast.Call) and parent.func is not node:
            callee = one_line(out.segment(parent.func))
            if callee in ("isinstance", "issubclass"):
                return "", None
            return "", f"passed to {callee}()"
        if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
            return "", f"returned from {self._function_of(node)}"
        if isinstance(parent, _CONTAINERS):
            return "", "put in a container"
        if isinstance(parent, ast.arguments):
            return "", "a parameter's default"
        if isinstance(parent, ast.Lambda):
            return "", "returned from a lambda"
        return "", None

    def _kept(self, node: Located, use: str, shown: str, reason: str) -> Explained:
        """LSO101: an import or alias of a removed name that stays, for uses left to the user."""
        uses = self._binding_uses(node)
        fact = f"{use}{shown} kept, but it {reason}"
        if uses:
            return (
                "LSO101",
                fact,
                f"migrate its uses at {uses}, then run the codemod again",
                "follows",
            )
        return (
            "LSO101",
            fact,
            "nothing here reads it: point it at the new name, or delete it",
            "follows",
        )

    def _binding_uses(self, node: Located) -> str:
        """The lines that read the name an import alias or alias assignment binds."""
        names = self.swept.names
        bound = node if isinstance(node, ast.alias) else self.gates.parent(node)
        for scope in names.scopes:
            for bindings in scope.bindings.values():
                for binding in bindings:
                    if binding.node is bound:
                        return _lines({self.swept.line(u) for u in names.uses(binding)})
        return ""

    def _users_of(self, node: Located) -> str:
        """Lines of the uses the flow analysis traced back to this escaping value."""
        around = {id(node), id(self.gates.parent(node))}
        return _lines(
            {
                self.swept.line(use)
                for use, origins in self.traced
                if any(around.intersection(o.trail) for o in origins)
            }
        )

    def _function_of(self, node: ast.AST) -> str:
        """`name()` of the function around `node`; 'a lambda' for one, or outside any."""
        parent = self.gates.parent(node)
        while parent is not None and not isinstance(
            parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        ):
            parent = self.gates.parent(parent)
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return f"{parent.name}()"
        return "a lambda"

    def _what_binds(self, root: ast.Name) -> str:
        names = self.swept.names
        scope = names.scope_of_load.get(id(root))
        bindings = names.lookup(root.id, scope) if scope is not None else None
        if not bindings:
            return "not bound in this module"
        deciding = [b for b in bindings if not b.none_fallback]
        if len(deciding) > 1:
            lines = ", ".join(
                str(self.swept.line(b.node if b.is_import else b.statement or b.node))
                for b in deciding
            )
            return f"bound more than one way (lines {lines})"
        binding = deciding[0] if deciding else bindings[0]
        if isinstance(binding.node, ast.arg):
            function = binding.scope.node
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return f"a parameter of {function.name}()"
            return "a lambda's parameter"
        return "bound to something it cannot resolve"


def users_must(qualified: str, target: table.Target) -> str:
    """What code holding the removed `qualified` must change to, on `target`, in one sentence."""
    found = table.gone(qualified, target)
    name = found.name if found is not None else qualified
    member = name.rpartition(".")[2]
    if target == "shim" and (
        table.is_old_namespace(name)
        or (table.classify(name) is not None and member in table.SHIM_EXPERIMENTAL_NAMES)
    ):
        shim = f"{table.SHIM_EXPERIMENTAL}.{member}"
        keeps = table.SHIM_EXPERIMENTAL if table.is_old_namespace(name) else shim
        return f"use {keeps}, which keeps the old names and signatures"
    if table.is_old_namespace(name):
        new = table.KERAS_EXPERIMENTAL.get(name, "tensorflow.keras.mixed_precision")
        return (
            f"use {display(new)}, whose names and signatures differ (--explain LSO103), "
            "or --target shim"
        )
    code = found.code if found is not None else None
    if code in ("LSO001", "LSO003"):
        return table.RULES_BY_CODE["LSO001"].instruction
    replacement = table.new_home(name, target)
    if replacement is not None:
        return f"use {display(replacement)}"
    return table.RULES_BY_CODE[code].instruction if code else "port it by hand"


def _lines(lines: set[int]) -> str:
    if not lines:
        return ""
    listed = ", ".join(map(str, sorted(lines)))
    return f"line {listed}" if len(lines) == 1 else f"lines {listed}"
