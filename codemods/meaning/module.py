"""What rules see and produce: the source with exact offsets, resolved names, fixes and findings.

Rules never edit text directly: each proposes a `Fix` (text edits over exact `ast` spans, plus the
name bindings it needs re-pointed) or reports a manual `Finding`. `codemods.apply.engine` then
settles the imports and applies what stands.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from codemods import table
from codemods.meaning.names import Analysis, Binding
from codemods.meaning.version_gates import Gates
from codemods.source import Edit, Finding, Located, Source, end_of, simple_statement_ends
from codemods.table import Reason, Target, collapse_compat


class Spelling(NamedTuple):
    """How a new name is written at one reference."""

    text: str
    through: Binding | None  # the old import/alias it relies on being re-pointed, if any
    kept: ast.Name | None  # the reference's root name when the new text still starts with it


@dataclass(eq=False)
class Fix:
    """One rule application: its edits stand or fall together."""

    code: str
    node: Located
    message: str
    edits: list[Edit]
    consumes: set[int]  # id() of the name loads this fix takes care of
    dropped: set[int]  # ... and of those no longer in the text afterwards
    through: set[int] = field(default_factory=set)  # id() of the bindings it needs re-pointed
    manual: str = ""  # the manual finding's fact that replaces this fix if it is withdrawn
    active: bool = True
    help: str = ""  # what the rewrite leaves to check, if anything
    # The shim target only: the rewrite's meaning needs `compat_lso.install()` at start-up (what
    # `python -m compat_lso run` does), which the engine adds once to the module.
    installs: bool = False


class Context:
    """What a rule sees: the module, its names, and where to put fixes and findings."""

    def __init__(
        self,
        source: Source,
        tree: ast.Module,
        target: Target,
        enabled: frozenset[str],
        *,
        names: Analysis | None = None,
        avoid: frozenset[int] = frozenset(),
    ) -> None:
        self.source = source
        self.tree = tree
        self.target = target
        self.enabled = enabled
        shim = table.shim_experimental if target == "shim" else None
        self.names = names if names is not None else Analysis(tree, shim)
        # `tf.keras.mixed_precision` -> 'tensorflow.keras.mixed_precision', or None: the analysis's
        # own (asked of every call and reference by several rules: no layer of its own).
        self.qualified: Callable[[ast.expr], str | None] = self.names.qualified
        # id() of old imports/aliases kept for a use left to the user (a first pass found them,
        # codemods/apply/imports.py): `spell` writes through another import where it can.
        self.avoid = avoid
        self.kept_for: set[int] = set()  # ... and those this pass found, for a second pass
        self.fixes: list[Fix] = []
        self.findings: list[Finding] = []
        self.claimed: set[int] = set()  # id() of reference nodes a rule has dealt with
        # (start, end) offsets of every construct reported for manual work: the sweep counts a
        # reference inside one (an argument of a reported call) as reported.
        self.reported: list[tuple[int, int]] = []
        # id() of apply_gradients calls LSO011 rewrote (scaled back, or given the scaled
        # gradients): LSO020/LSO021 leave them alone, and no second rewrite touches them.
        self.applies_done: set[int] = set()
        self._gates: Gates | None = None
        self._statement_ends: dict[int, int] | None = None  # for suppression comments

    # -- asking ------------------------------------------------------------------------------------
    def parent(self, node: ast.AST) -> ast.AST | None:
        """The node that holds `node` in this module: found down from the module by source spans,
        with its ancestors, and kept (codemods/meaning/version_gates.py). The rules ask about a
        few nodes of modules of thousands: a map of the whole tree cost more."""
        return self.gates.parent(node)

    def wants(self, code: str, node: Located) -> bool:
        """Whether `code` is enabled, does something on this target, and is not suppressed here."""
        if code not in self.enabled or table.RULES_BY_CODE[code].action[self.target] == "none":
            return False
        if self.suppresses(node, code):
            return False
        # A private name migrated as its public one (LSO014, table.public_of_private): the
        # user's ignore[LSO014] at that line still holds.
        return not (self.suppresses(node, "LSO014") and through_private(self.names, node))

    def suppresses(self, node: Located, code: str | None = None) -> bool:
        """Whether a suppression comment covers `node`: one for `code`, or (None) any at all.

        A comment covers the constructs that start or end on its line, and everything in a
        statement written over several lines when it sits on the statement's last line (where a
        formatter such as black leaves the comment of a call it splits: after the `)`).
        """
        source = self.source
        if "compat-lso" not in source.text:
            return False
        if self._statement_ends is None:
            self._statement_ends = simple_statement_ends(self.tree)
        start = node.lineno
        lines = (start, end_of(node)[0], self._statement_ends.get(start, start))
        for lineno in dict.fromkeys(lines):
            codes = source.suppressed_codes(lineno)
            if codes is not None and (code is None or not codes or code in codes):
                return True
        return False

    def safe(self, code: str) -> bool:
        return table.RULES_BY_CODE[code].action[self.target] == "safe"

    # -- spelling ----------------------------------------------------------------------------------
    def spell(self, reference: ast.expr, new: str) -> Spelling | None:
        """How to write qualified name `new` in place of `reference`, keeping the user's aliases.

        Returns the text and, when the text relies on re-pointing an old import or alias, that
        binding; None when `new` cannot be written here.
        """
        chain: list[str] = []
        root = reference
        while isinstance(root, ast.Attribute):
            chain.append(root.attr)
            root = root.value
        assert isinstance(root, ast.Name)
        chain.reverse()
        binding = self.names.binding_of(root)
        if binding is None:
            return None
        base = self.names.binding_qualified(binding)
        if base is None:
            return None
        # Longest prefix of the written chain that the new name still starts with:
        # `tf.keras.mixed_precision.experimental.X` -> `tf.keras.mixed_precision` + `.Y`.
        for keep in range(len(chain), -1, -1):
            prefix = collapse_compat(".".join([base, *chain[:keep]]))
            if table.is_old_namespace(prefix) or table.classify(prefix):
                continue
            if new == prefix or new.startswith(prefix + "."):
                return Spelling(".".join([root.id, *chain[:keep]]) + new[len(prefix) :], None, root)
        if new.startswith(table.SHIM_MODULE + "."):
            return Spelling(new, None, None)
        # The root is itself an old alias (`mp` for the experimental module, `set_policy` imported
        # from it): write through it, on condition that it is re-pointed to its new home.
        rebound = table.new_home(base, self.target)
        if rebound and (new == rebound or new.startswith(rebound + ".")):
            if id(binding) in self.avoid and (other := self._another_root(root, new)):
                return other
            local = _local_name_after_rebind(binding, rebound)
            return Spelling(local + new[len(rebound) :], binding, root)
        return None

    def _another_root(self, root: ast.Name, new: str) -> Spelling | None:
        """`new` written through another import seen from `root`'s scope (`tf.keras...` for an old
        alias kept for a use left to the user), the longest that `new` starts with. An old import
        that the migration re-points to `new`'s home counts too, through that re-pointing (a fix
        through it is withdrawn if it stays old): so a second run, which sees it re-pointed,
        writes nothing more."""
        names = self.names
        scope = names.scope_of_load.get(id(root))
        found: list[tuple[str, Spelling]] = []
        for bindings in names.module_scope.bindings.values() if scope is not None else ():
            binding = bindings[0]
            qualified = names.binding_qualified(binding) or ""
            if not binding.is_import:
                continue
            home, name, through = qualified, binding.name, None
            if table.is_old_namespace(qualified) or table.classify(qualified):
                rebound = table.new_home(qualified, self.target)
                if rebound is None or id(binding) in self.avoid or not names.uses(binding):
                    continue
                home, name, through = rebound, _local_name_after_rebind(binding, rebound), binding
            if not (new == home or new.startswith(home + ".")):
                continue
            if table.is_old_namespace(home) or table.classify(home):
                continue
            seen = names.lookup(binding.name, scope) if scope is not None else None
            if (
                seen is bindings  # not shadowed in a function (`try:` import / `except:` import)
                and all(names.binding_qualified(b) == qualified for b in seen)
                # Module-level code runs in order: the import must come before the use.
                and (scope is not names.module_scope or _before(bindings, root))
            ):
                found.append((home, Spelling(name + new[len(home) :], through, None)))
        if not found:
            return None
        return max(found, key=lambda pair: len(pair[0]))[1]

    # -- answering ---------------------------------------------------------------------------------
    def loads_in(self, node: ast.AST) -> set[int]:
        return {
            id(n) for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }

    def claim(self, node: ast.AST) -> None:
        """Mark a reference as dealt with, and the shorter ones inside it (`tf.keras`, `tf`)."""
        self.claimed.add(id(node))
        while isinstance(node, ast.Attribute):
            node = node.value
            self.claimed.add(id(node))

    def fix(
        self,
        code: str,
        node: Located,
        message: str,
        edits: Iterable[Edit],
        *,
        consumes: set[int],
        spellings: Iterable[Spelling] = (),
        manual: str = "",
        help: str = "",
        installs: bool = False,
    ) -> None:
        """Propose edits that stand or fall together; `consumes` are the name loads they rewrite.

        `message` says what the rewrite does; `help`, where the rewrite leaves something to
        check, what (printed on the finding's `help:` line). `manual` (default: `message`) is
        the fact of the finding that replaces the fix if it is withdrawn
        (codemods/apply/imports.py).
        `installs`: the rewrite means what it should only once `compat_lso.install()` has run;
        the engine adds that call once to the module (codemods/apply/shim_import.py).
        """
        self.claim(node)
        if self._noted_dead(node, code, manual or message):
            return  # a branch no supported TensorFlow runs: kept as written
        spellings = list(spellings)
        kept = {id(s.kept) for s in spellings if s.kept is not None}
        through = {id(s.through) for s in spellings if s.through is not None}
        self.fixes.append(
            Fix(
                code,
                node,
                message,
                list(edits),
                consumes,
                consumes - kept,
                through,
                manual or message,
                help=help,
                installs=installs,
            )
        )

    def instruction(self, code: str) -> str:
        """The rule's one-line fix on this target: a finding's `help:` unless it names its own."""
        return table.RULES_BY_CODE[code].instruction_on(self.target)

    def report(
        self, code: str, node: Located, message: str, *, reason: Reason, help: str | None = None
    ) -> None:
        """Report manual work: `message` is the fact at the node, `help` the fix (default: the
        rule's instruction on this target), each one short line; `reason` why it stays manual
        (codemods/table/reasons.py)."""
        self.claim(node)
        self.manual(node, code, message, reason=reason, help=help)

    def note(self, code: str, node: Located, message: str, *, help: str | None = None) -> None:
        """Record a note: no work left, but printed in every format and counted apart. `help`
        (default: the rule's instruction on this target) says what, if anything, to do."""
        if self.gates.dead(node) is not None:
            return  # what a rewrite there would change: nothing there is rewritten
        self.findings.append(
            Finding(
                node.lineno,
                self.source.column(node),
                code,
                message,
                fixed=True,
                note=True,
                help=self.instruction(code) if help is None else help,
            )
        )

    def manual(
        self, node: Located, code: str, message: str, *, reason: Reason, help: str | None = None
    ) -> None:
        """Record a finding for manual work on `node`, saying so if it sits in an old branch; a
        note instead where no supported TensorFlow runs that branch (nothing breaks there)."""
        self.reported.append(self.source.span(node))
        if self._noted_dead(node, code, message):
            return
        self.findings.append(
            Finding(
                node.lineno,
                self.source.column(node),
                code,
                message + (self.gate_note(node, code) or self.flag_note(node)),
                fixed=False,
                help=self.instruction(code) if help is None else help,
                reason=reason,
            )
        )

    def _noted_dead(self, node: Located, code: str, fact: str) -> bool:
        """Where no supported TensorFlow runs `node`'s branch (a version test decided, e.g.
        `if tf.__version__.startswith("2.2.")`), a note with `fact` saying so, and True: nothing
        there is rewritten nor left to do. False where the branch may run."""
        dead = self.gates.dead_note(node, self.source, lambda gate: gate.lineno)
        if dead is None:
            return False
        if self.source.span(node) not in self.reported:
            self.reported.append(self.source.span(node))
        said, advice = dead
        column = self.source.column(node)
        self.findings.append(
            Finding(node.lineno, column, code, fact + said, fixed=True, note=True, help=advice)
        )
        return True

    @property
    def gates(self) -> Gates:
        if self._gates is None:
            self._gates = Gates(self.tree, self.names)
        return self._gates

    def gate_note(self, node: Located, code: str) -> str:
        """' (branch of `<the gate>`, line N)' when a version gate or feature detection guards
        `node`; '' otherwise. What to do about such a branch is said once, by --explain."""
        gate = self.gates.gate(node)
        if gate is None:
            return ""
        assert isinstance(gate, (ast.stmt, ast.expr))
        return self.gates.suffix(gate, self.source, gate.lineno, node)

    def flag_note(self, node: Located) -> str:
        """' (branch of flag `use_experimental_api`, line N)' when a flag the code or its caller
        sets (not TensorFlow's version) guards `node`; '' otherwise."""
        found = self.gates.flag(node)
        return "" if found is None else self.gates.flag_suffix(node, found[0].lineno)

    def edit(self, node: Located, text: str) -> Edit:
        start, end = self.source.span(node)
        return Edit(start, end, text)


def _before(bindings: list[Binding], use: ast.Name) -> bool:
    """Every statement binding the name starts on a line before `use`."""
    return all(b.statement is not None and b.statement.lineno < use.lineno for b in bindings)


def _local_name_after_rebind(binding: Binding, rebound: str) -> str:
    """`from m.experimental import set_policy` re-pointed imports `set_global_policy` (no alias)."""
    if isinstance(binding.node, ast.alias) and binding.node.asname is None:
        if isinstance(binding.statement, ast.ImportFrom):
            return rebound.rpartition(".")[2]
        return rebound.partition(".")[0]
    return binding.name


def delete_statement(context: Context, statement: ast.stmt) -> Edit:
    """Remove a statement: its whole line when it has one to itself, else leave a `pass`."""
    source = context.source
    body = context.names.body_of.get(id(statement), [])
    start, end = source.span(statement)
    line_start, line_end = source.lines(statement)
    before = source.text[line_start:start]
    after = source.text[end:line_end]
    alone = not before.strip() and (not after.strip() or after.strip().startswith("#"))
    if len(body) > 1 and alone:
        return Edit(line_start, line_end, "")
    return Edit(start, end, "pass")


def line_allows(context: Context, node: Located) -> bool:
    """No suppression comment, of any code, covers the node (see Context.suppresses)."""
    return not context.suppresses(node)


def through_private(names: Analysis, node: object) -> bool:
    """Whether `node` reads a name imported from TensorFlow's private package (LSO014): a
    suppression of LSO014 at its line still holds when a rule migrates it as the public name
    (table.public_of_private)."""
    if not isinstance(node, ast.AST):
        return False
    for name in ast.walk(node):
        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load):
            binding = names.binding_of(name)
            base = names.binding_qualified(binding) if binding is not None else None
            if base is not None and table.is_private(base):
                return True
    return False
