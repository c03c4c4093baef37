"""The last stage of a migration: one sweep over the migrated module for what the target lacks.

After the rules ran and the engine settled the imports, the migrated text is parsed again (the
engine's own check parse) and its names resolved the way the rules resolve them. Every reference
that resolves, by meaning, to something the target's TensorFlow/Keras no longer has or does not
understand (`table.gone` and the sweep block of codemods/table.py) must then be either rewritten
(it is no longer there) or reported: at its own line, or inside a construct reported as a whole.
Whatever is left is reported here, with a code of its own:

- LSO100: a gap in the rules (no rule rewrote or reported it);
- LSO101: an import or alias of a removed name that stays (it fails at import time);
- LSO102: a use through a binding the codemod cannot follow (codemods/flow.py says how it came);
- LSO103: a removed module or class that escapes (returned, passed, stored);
- LSO104: any of these under a version gate or feature detection (codemods/gates.py).

A suppression comment on the line (bare, with the sweep's code, or with the code of the rule the
name falls under) and `--skip`/`--only` of either code are respected: the user said so.
`unreported(text, target)` states the guarantee as a function, for the tests and the corpus.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from codemods import table
from codemods.context import SUPPRESSION, Context, Edit, Finding, Located, Source
from codemods.flow import Flow, Origin
from codemods.gates import Gates
from codemods.resolve import Analysis, Binding
from codemods.table import Target, display

# Where a removed name used as a value goes somewhere the codemod cannot follow.
_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Starred)
_OLD_SIGNATURE = "LossScaleOptimizer"


@dataclass(frozen=True)
class Flag:
    """A reference in the migrated module that breaks on the target."""

    node: Located  # in the migrated tree
    code: str  # the sweep code it is reported under when nothing reported it
    natural: str | None  # the rule code the name falls under (suppression, --skip)
    message: str


def run(context: Context, text: str, tree: ast.Module, edits: Sequence[Edit]) -> list[Finding]:
    """The pipeline stage: findings for every flag nothing reported (and records their spans)."""
    if not table.SWEEP_CODES & context.enabled:
        return []
    same = text == context.source.text
    sweeper = Sweeper(
        context.source,
        context.source if same else Source(text),
        tree,
        context.names if same else Analysis(tree),
        edits=edits,
        target=context.target,
    )
    manual = {f.line for f in context.findings if not f.fixed}
    findings = []
    for flag, (start, line, col) in sweeper.uncovered(manual, context.reported, context.enabled):
        findings.append(Finding(line, col, flag.code, flag.message, fixed=False))
        context.reported.append((start, start + 1))
    return findings


def unreported(text: str, target: Target) -> list[Finding]:
    """What the sweep would flag in the migration of `text` that no finding reports: the guarantee
    holds when this is empty. A file the prefilter skips is never migrated: then every flag in it
    counts. Raises SyntaxError when `text` does not parse."""
    # The engine runs this module; imported here so that data still flows one way in the pipeline.
    from codemods.engine import migrate, parse
    from codemods.files import may_contain_targets

    original = Source(text)
    if not may_contain_targets(text.encode("utf-8"), target):
        tree = parse(text)
        sweeper = Sweeper(original, original, tree, Analysis(tree), edits=(), target=target)
        return [sweeper.finding(flag) for flag in sweeper.flags()]
    result = migrate(text, target)
    tree = parse(result.text)
    sweeper = Sweeper(
        original, Source(result.text), tree, Analysis(tree), edits=result.edits, target=target
    )
    manual = {f.line for f in result.findings if not f.fixed}
    return [
        Finding(line, col, flag.code, flag.message, fixed=False)
        for flag, (_, line, col) in sweeper.uncovered(manual, result.reported, None)
    ]


class Positions:
    """Offsets in the migrated text -> offsets in the original, through the edits that made it."""

    def __init__(self, edits: Sequence[Edit]) -> None:
        self.starts: list[int] = []
        self.spans: list[tuple[int, int, int]] = []  # (end in the output, original start, shift)
        shift = 0
        for edit in sorted(edits, key=lambda e: (e.start, e.end)):
            start = edit.start + shift
            shift += len(edit.text) - (edit.end - edit.start)
            self.starts.append(start)
            self.spans.append((start + len(edit.text), edit.start, shift))

    def original(self, offset: int) -> int:
        index = bisect.bisect_right(self.starts, offset) - 1
        if index < 0:
            return offset
        end, start, shift = self.spans[index]
        return start if offset < end else offset - shift  # inside an edit: where it started


class Sweeper:
    """The flags of one migrated module, placed in the original text."""

    def __init__(
        self,
        original: Source,
        out: Source,
        tree: ast.Module,
        names: Analysis,
        *,
        edits: Sequence[Edit],
        target: Target,
    ) -> None:
        self.original = original
        self.out = out
        self.tree = tree
        self.names = names
        self.target = target
        self.positions = Positions(edits)
        self.gates = Gates(tree)
        self._flow: Flow | None = None
        self._bindings: dict[int, Binding] | None = None
        self._traced: list[tuple[ast.expr, list[Origin]]] = []  # uses followed by the flow

    # -- where -------------------------------------------------------------------------------------
    def place(self, node: Located) -> tuple[int, int, int]:
        """(offset, line, column) of `node` in the original text; line and column 1-based."""
        offset = self.positions.original(self.out.offset(node.lineno, node.col_offset))
        line = bisect.bisect_right(self.original.line_starts, offset)
        return offset, line, offset - self.original.line_starts[line - 1] + 1

    def line(self, node: ast.AST) -> int:
        assert isinstance(node, (ast.expr, ast.stmt, ast.alias, ast.keyword, ast.arg))
        return self.place(node)[1]

    def finding(self, flag: Flag) -> Finding:
        _, line, col = self.place(flag.node)
        return Finding(line, col, flag.code, flag.message, fixed=False)

    def uncovered(
        self,
        manual_lines: set[int],
        reported: Sequence[tuple[int, int]],
        enabled: frozenset[str] | None,
    ) -> Iterable[tuple[Flag, tuple[int, int, int]]]:
        for flag in self.flags():
            if enabled is not None and (
                flag.code not in enabled or (flag.natural and flag.natural not in enabled)
            ):
                continue
            place = self.place(flag.node)
            start, line, _ = place
            if line in manual_lines or any(a <= start < b for a, b in reported):
                continue
            match = SUPPRESSION.search(self.original.line(line))
            if match is not None:
                codes = match.group("codes")
                named = {c.strip() for c in codes.split(",")} if codes else set()
                if not codes or flag.code in named or flag.natural in named:
                    continue
            yield flag, place

    # -- what --------------------------------------------------------------------------------------
    def flags(self) -> list[Flag]:
        names = self.names
        flags: dict[int, Flag] = {}
        unresolved: list[ast.Attribute | ast.Name] = []
        self._imports(flags)
        inner = {id(a.value) for a in names.attributes}
        references: list[ast.Attribute | ast.Name] = [*names.attributes, *names.loads]
        for node in references:
            if id(node) in inner or id(node) in flags or not isinstance(node.ctx, ast.Load):
                continue
            qualified = names.qualified(node)
            if qualified is None:
                unresolved.append(node)
                continue
            found = table.gone(qualified, self.target)
            if found is not None:
                flags[id(node)] = self._removed(node, qualified, found)
        self._members(flags)
        self._calls(flags)
        if flags:  # a removed name is here: follow it where strict resolution gave up
            for node in unresolved:
                origins = [o for o in self.flow().origins(node) if self._gone(o.qualified)]
                if origins:
                    self._traced.append((node, origins))
                    flags[id(node)] = self._followed(node, origins)
            for key, flag in flags.items():  # now that the users are known
                if flag.code == "LSO103" and self._traced:
                    users = self._users_of(flag.node)
                    if users:
                        message = flag.message.replace(
                            ", out of the codemod's reach:",
                            f", out of the codemod's reach (used at {users}):",
                            1,
                        )
                        flags[key] = Flag(flag.node, flag.code, flag.natural, message)
        for node in unresolved:
            if id(node) not in flags:
                spelled = self._spelled(node)
                if spelled is not None:
                    flags[id(node)] = spelled
        self._old_signature_calls(flags)
        return sorted(flags.values(), key=lambda f: (f.node.lineno, f.node.col_offset))

    def flow(self) -> Flow:
        if self._flow is None:
            self._flow = Flow(self.names, self.tree, self._gone)
        return self._flow

    def _gone(self, qualified: str) -> bool:
        return table.gone(qualified, self.target) is not None

    def _imports(self, flags: dict[int, Flag]) -> None:
        """Import statements naming a removed module or member fail at import time."""
        for statement in self.names.imports:
            for alias in statement.names:
                found = table.gone(alias.name, self.target)
                if found is not None:
                    flags[id(alias)] = self._removed(alias, alias.name, found)
        for from_import in self.names.import_froms:
            module = from_import.module
            if from_import.level or not module:
                continue
            for alias in from_import.names:
                imported = module if alias.name == "*" else f"{module}.{alias.name}"
                found = table.gone(imported, self.target)
                if found is not None:
                    flags[id(alias)] = self._removed(alias, imported, found)

    def _members(self, flags: dict[int, Flag]) -> None:
        members: dict[str, list[table.RemovedMember]] = {}
        for member in table.REMOVED_MEMBERS[self.target]:
            members.setdefault(member.name, []).append(member)
        if not members:
            return
        called = {id(call.func) for call in self.names.calls}
        for node in self.names.attributes:
            for member in members.get(node.attr, ()):
                if member.called and id(node) not in called:
                    continue
                if member.receiver == "loss_scale_optimizer" and not (
                    isinstance(node.value, ast.Name)
                    and self.names.is_loss_scale_optimizer(node.value)
                ):
                    continue
                written = self.out.segment(node) + ("()" if member.called else "")
                subject = f"`{written}`: {member.name} {member.reason}"
                flags.setdefault(id(node), self._plain(node, subject, member.code))

    def _calls(self, flags: dict[int, Flag]) -> None:
        """`getattr(module, "name")` of a removed name, and calls the target reads differently."""
        limits = table.UNSUPPORTED_CALLS[self.target]
        for call in self.names.calls:
            func = call.func
            if (
                isinstance(func, ast.Name)
                and func.id == "getattr"
                and len(call.args) >= 2
                and isinstance(call.args[1], ast.Constant)
                and isinstance(call.args[1].value, str)
                and self.names.is_builtin(func)
            ):
                base = self.names.qualified(call.args[0]) if call.args else None
                if base is not None:
                    qualified = f"{base}.{call.args[1].value}"
                    found = table.gone(qualified, self.target)
                    if found is not None:
                        flags.setdefault(id(call), self._removed(call, qualified, found))
                continue
            if not any(limits) or id(call) in flags:
                continue
            callee = self.names.qualified(func)
            if callee is None:
                continue
            for limit in limits:
                if callee not in limit.callees:
                    continue
                problem = _call_problem(call, limit)
                if problem is not None:
                    subject = f"{display(callee)}({problem}) {limit.reason}"
                    flags[id(call)] = self._plain(call, subject, limit.code)
                    break

    # -- flags of each kind ------------------------------------------------------------------------
    def _removed(self, node: Located, qualified: str, found: table.Gone) -> Flag:
        """A reference that resolves, strictly, to a removed name: what it is used for decides."""
        shown = display(qualified)
        what = (
            f"{shown} {found.reason}"
            if found.name == table.canonical(qualified)
            else (f"{shown}: {display(found.name)} {found.reason}")
        )
        gate = self.gates.gate(node)
        use, escape = self._use(node)
        if gate is not None:
            subject = f"{use}{shown} ({what})" if use else what
            return self._gated(node, subject, gate, found.code)
        if use:
            return Flag(node, "LSO101", found.code, self._kept(node, use, shown, what))
        if escape is not None:
            message = (
                f"{what}; it escapes here ({escape}), out of the codemod's reach: its users "
                f"must change: {table.users_must(qualified, self.target)}"
            )
            return Flag(node, "LSO103", found.code, message)
        return Flag(
            node,
            "LSO100",
            found.code,
            f"{what}, and no rule rewrote or reported it here: "
            f"{table.users_must(qualified, self.target)}",
        )

    def _plain(self, node: Located, subject: str, code: str | None) -> Flag:
        gate = self.gates.gate(node)
        if gate is not None:
            return self._gated(node, subject, gate, code)
        instruction = (
            table.RULES_BY_CODE[code].instruction
            if code
            else table.RULES_BY_CODE["LSO100"].instruction
        )
        return Flag(
            node, "LSO100", code, f"{subject}, and no rule rewrote or reported it: {instruction}"
        )

    def _gated(self, node: Located, subject: str, gate: ast.AST, code: str | None) -> Flag:
        assert isinstance(gate, (ast.stmt, ast.expr))
        return Flag(
            node,
            "LSO104",
            code,
            f"{subject}, in a branch for TF < 2.4 (under `{self.gates.describe(gate, self.out)}` "
            f"at line {self.line(gate)}): {table.RULES_BY_CODE['LSO104'].instruction}",
        )

    def _followed(self, node: ast.Attribute | ast.Name, origins: list[Origin]) -> Flag:
        """A use whose value the flow analysis traced to a removed name."""
        first = origins[0]
        hows = "; ".join(dict.fromkeys(self._how(o) for o in origins))
        subject = f"`{_short(self.out.segment(node))}` may hold {display(first.qualified)} ({hows})"
        found = table.gone(first.qualified, self.target)
        code = found.code if found is not None else None
        gate = self.gates.gate(node)
        if gate is not None:
            return self._gated(node, subject, gate, code)
        cannot = {
            "bound": "a name bound more than one way",
            "parameter": "a value passed as an argument",
            "attribute": "a value stored in an attribute",
            "return": "a value returned by a function",
            "getattr": "getattr()",
            "strict": "this binding",
        }[first.via]
        return Flag(
            node,
            "LSO102",
            code,
            f"{subject}: the codemod cannot follow {cannot}, so it neither rewrote nor reported "
            f"this use: {table.users_must(first.qualified, self.target)}",
        )

    def _how(self, origin: Origin) -> str:
        line = self.line(origin.node)
        value = display(origin.value)
        if origin.via == "bound":
            return f"{origin.holder} is bound more than one way: line {line} binds {value}"
        if origin.via == "parameter":
            return f"{origin.holder} is a parameter: line {line} passes {value}"
        if origin.via == "attribute":
            return f"{origin.holder} is an attribute: line {line} stores {value} there"
        if origin.via == "return":
            return f"{origin.holder} returns {value} at line {line}"
        if origin.via == "getattr":
            return f"getattr() at line {line}"
        return f"bound at line {line}"

    def _spelled(self, node: ast.Attribute | ast.Name) -> Flag | None:
        """`tf.keras.mixed_precision.experimental.X` on a `tf` the codemod cannot resolve (a
        parameter, a name bound more than one way): what it spells, if it is TensorFlow."""
        attrs: list[str] = []
        root: ast.expr = node
        while isinstance(root, ast.Attribute):
            attrs.append(root.attr)
            root = root.value
        if "experimental" not in attrs or not isinstance(root, ast.Name):
            return None
        attrs.reverse()
        assumed = {"tf": "tensorflow", "tensorflow": "tensorflow"}.get(root.id, root.id)
        qualified = ".".join([assumed, *attrs])
        if not self._gone(qualified):
            return None
        shown = display(qualified)
        subject = (
            f"`{_short(self.out.segment(node))}` spells {shown}, but {root.id} here is "
            f"{self._what_binds(root)}"
        )
        gate = self.gates.gate(node)
        found = table.gone(qualified, self.target)
        code = found.code if found is not None else None
        if gate is not None:
            return self._gated(node, subject, gate, code)
        return Flag(
            node,
            "LSO102",
            code,
            f"{subject}, which the codemod cannot follow; if it is "
            f"{display(assumed)}: {table.users_must(qualified, self.target)}",
        )

    def _old_signature_calls(self, flags: dict[int, Flag]) -> None:
        """`<x>.LossScaleOptimizer(opt, loss_scale=...)` on an `x` the codemod cannot resolve: the
        old class's signature, whatever `x` is (the new class takes no loss_scale)."""
        for call in self.names.calls:
            func = call.func
            if not isinstance(func, ast.Attribute) or func.attr != _OLD_SIGNATURE:
                continue
            if id(call) in flags or id(func) in flags or self.names.qualified(func) is not None:
                continue
            old_keyword = any(k.arg == "loss_scale" for k in call.keywords)
            second = call.args[1] if len(call.args) > 1 else None
            old_positional = isinstance(second, ast.Constant) and second.value == "dynamic"
            if not (old_keyword or old_positional):
                continue
            root: ast.expr = func
            while isinstance(root, ast.Attribute):
                root = root.value
            holder = (
                f"{root.id} here is {self._what_binds(root)}"
                if isinstance(root, ast.Name)
                else "its receiver is a computed value"
            )
            subject = (
                f"`{_short(self.out.segment(func))}(..., loss_scale)` is the old experimental "
                f"LossScaleOptimizer's signature, and {holder}"
            )
            gate = self.gates.gate(call)
            if gate is not None:
                flags[id(call)] = self._gated(call, subject, gate, "LSO001")
                continue
            flags[id(call)] = Flag(
                call,
                "LSO102",
                "LSO001",
                f"{subject}, which the codemod cannot follow; "
                f"{table.RULES_BY_CODE['LSO001'].instruction}",
            )

    # -- what a node is used for -------------------------------------------------------------------
    def _use(self, node: Located) -> tuple[str, str | None]:
        """('import of ' / 'alias of ', None) for a binding; ('', how it escapes) or ('', None)."""
        parent = self.gates.parent(node)
        if isinstance(node, ast.alias):
            return "import of ", None
        if isinstance(parent, ast.Assign) and parent.value is node:
            targets = parent.targets
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return f"alias {targets[0].id} of ", None
            stored = ", ".join(_short(self.out.segment(t)) for t in targets)
            return "", f"stored in {stored}"
        if isinstance(parent, ast.AnnAssign) and parent.value is node:
            if isinstance(parent.target, ast.Name):
                return f"alias {parent.target.id} of ", None
            return "", f"stored in {_short(self.out.segment(parent.target))}"
        if isinstance(parent, ast.keyword):
            parent = self.gates.parent(parent)
        if isinstance(parent, ast.Call) and parent.func is not node:
            callee = _short(self.out.segment(parent.func))
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

    def _kept(self, node: Located, use: str, shown: str, what: str) -> str:
        uses = self._binding_uses(node)
        if uses:
            why = f"stays for its uses at {uses}, which need manual work"
        else:
            why = "stays: nothing here reads it, but another module may import it from here"
        return (
            f"this {use}{shown} {why}; {what}, so this line fails as soon as the module is "
            "imported: migrate those uses (or point it at the new name), then run again"
        )

    def _binding_uses(self, node: Located) -> str:
        """The lines that read the name an import alias or alias assignment binds."""
        if self._bindings is None:
            self._bindings = {
                id(binding.node): binding
                for scope in self.names.scopes
                for bindings in scope.bindings.values()
                for binding in bindings
            }
        bound = node if isinstance(node, ast.alias) else self.gates.parent(node)
        binding = self._bindings.get(id(bound))
        if binding is None:
            return ""
        return _lines({self.line(u) for u in self.names.uses(binding)})

    def _users_of(self, node: Located) -> str:
        """Lines of the uses the flow analysis traced back to this escaping value."""
        around = {id(node), id(self.gates.parent(node))}
        return _lines(
            {
                self.line(use)
                for use, origins in self._traced
                if any(id(o.node) in around for o in origins)
            }
        )

    def _function_of(self, node: ast.AST) -> str:
        parent = self.gates.parent(node)
        while parent is not None and not isinstance(
            parent, (ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            parent = self.gates.parent(parent)
        return f"{parent.name}()" if parent is not None else "a lambda"

    def _what_binds(self, root: ast.Name) -> str:
        scope = self.names.scope_of_load.get(id(root))
        bindings = self.names.lookup(root.id, scope) if scope is not None else None
        if not bindings:
            return "not bound in this module"
        if len([b for b in bindings if not b.none_fallback]) > 1:
            lines = ", ".join(str(self.line(b.node)) for b in bindings if _located(b.node))
            return f"bound more than one way (lines {lines})"
        binding = bindings[0]
        if isinstance(binding.node, ast.arg):
            function = binding.scope.node
            name = getattr(function, "name", "a lambda")
            return f"a parameter of {name}()" if name != "a lambda" else "a lambda's parameter"
        return "bound to something it cannot resolve"


def _call_problem(call: ast.Call, limit: table.UnsupportedCall) -> str | None:
    for keyword in call.keywords:
        if keyword.arg in limit.keywords:
            accepted = limit.keywords[keyword.arg]
            value = keyword.value
            if not (isinstance(value, ast.Constant) and value.value in accepted and accepted):
                return f"{keyword.arg}=..."
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if limit.max_positional is not None and len(positional) > limit.max_positional:
        return f"{len(positional)} positional arguments"
    return None


def _lines(lines: set[int]) -> str:
    if not lines:
        return ""
    listed = ", ".join(map(str, sorted(lines)))
    return f"line {listed}" if len(lines) == 1 else f"lines {listed}"


def _located(node: ast.AST) -> bool:
    return isinstance(node, (ast.expr, ast.stmt, ast.alias, ast.keyword, ast.arg))


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
