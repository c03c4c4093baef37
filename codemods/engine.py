"""The migration of one module's source text: analyse, run the rules, fix the imports, splice.

Rules (codemods.rules) propose fixes and findings through a `codemods.context.Context`. Once every
rule has run, the bindings of
the old names are settled together: an import or alias whose every use was rewritten is re-pointed
to the new module (keeping the user's alias) or removed when nothing reads it any more; one that is
still read by code no rule could rewrite stays, and the fixes that depended on re-pointing it are
withdrawn and reported instead. Text outside the edited spans is never touched, so comments and
formatting elsewhere survive by construction, and the result is parsed again: that tree is what the
final sweep (codemods/sweep.py) checks for anything the target lacks that nothing reported.

Why edits over `ast` spans and not a libcst transformer: a libcst parse plus a transformer pass
costs about 2x the parse before any rule runs, and findings need line:column positions, which
libcst only gives through its PositionProvider (another full pass). `ast` parses in about 0.06x a
libcst parse with positions included, and span edits touch nothing else. libcst still runs the
same transform for `python -m libcst.tool codemod` (codemods/commands/).
"""

from __future__ import annotations

import ast
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from codemods import sweep, table
from codemods.context import (
    Context,
    Edit,
    Finding,
    Source,
    delete_statement,
    end_of,
    line_allows,
)
from codemods.resolve import Binding
from codemods.rules import run_rules
from codemods.table import Target


class MigrationError(Exception):
    """The module could not be migrated; it must be left untouched."""


@dataclass
class Result:
    text: str
    findings: list[Finding]
    edits: list[Edit] = field(default_factory=list)  # what turned the input into `text`
    # (start, end) offsets in the input of every construct reported for manual work
    reported: list[tuple[int, int]] = field(default_factory=list)

    def changed(self, original: str) -> bool:
        return self.text != original


# -- the whole flow ------------------------------------------------------------------------------


def migrate(text: str, target: Target, enabled: Iterable[str] | None = None) -> Result:
    """Migrate one module's source. Raises MigrationError when it does not parse."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError) as error:
        where = (
            f" at line {error.lineno}, column {error.offset or 0}"
            if isinstance(error, SyntaxError) and error.lineno
            else ""
        )
        reason = error.msg if isinstance(error, SyntaxError) else str(error)
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        raise MigrationError(
            f"does not parse{where}: {reason}; fix the syntax error (the file must parse as "
            f"Python {version}, the interpreter running the codemod) and run again; "
            "file left unchanged"
        ) from None
    except (RecursionError, MemoryError):
        raise MigrationError(
            "nested too deeply to parse (Python's parser gave up); migrate this file by hand or "
            "split the expression; file left unchanged"
        ) from None
    try:
        return _migrate_tree(text, tree, target, enabled)
    except RecursionError:
        # Python's recursion limit, hit by the analysis of an expression nested hundreds deep
        # (`a + a + ... + a` with ~500 terms): the file is reported, the rest of the run goes on.
        raise MigrationError(
            "nested too deeply to analyse (an expression hundreds of levels deep hits Python's "
            "recursion limit); migrate this file by hand or split the expression; "
            "file left unchanged"
        ) from None


def parse(text: str) -> ast.Module:
    """`ast.parse`, without the warnings compiling the user's code can raise (`"\\d"` is a
    DeprecationWarning on 3.11 and a SyntaxWarning, shown by default, from 3.12): they are about
    the user's code, not the migration, and would be printed once per file otherwise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text)


def _migrate_tree(
    text: str, tree: ast.Module, target: Target, enabled: Iterable[str] | None
) -> Result:
    source = Source(text)
    codes = frozenset(enabled) if enabled is not None else frozenset(table.RULES_BY_CODE)
    context = Context(source, tree, target, codes)
    run_rules(context)
    binding_edits = _settle_bindings(context)
    edits = [edit for fix in context.fixes if fix.active for edit in fix.edits] + binding_edits
    edits = _keep_blocks_non_empty(context, edits)
    needs_shim = any(f"{table.SHIM_MODULE}." in edit.text for edit in edits)
    if needs_shim and not _has_shim_import(context):
        edits.append(_import_edit(context, f"import {table.SHIM_MODULE}"))
    new_text = apply_edits(text, edits)
    findings = context.findings + [
        Finding(fix.node.lineno, source.column(fix.node), fix.code, fix.message, fixed=True)
        for fix in context.fixes
        if fix.active
    ]
    new_tree = tree
    if new_text != text:
        try:
            new_tree = parse(new_text)
        except SyntaxError as error:  # a bug in a rule: never write it
            raise MigrationError(
                f"internal error, the rewrite would not parse ({error}); file left unchanged"
            ) from None
    edits = sorted(edits, key=lambda e: (e.start, e.end))
    findings += sweep.run(context, new_text, new_tree, edits)
    return Result(new_text, sorted(set(findings)), edits, list(context.reported))


def _settle_bindings(context: Context) -> list[Edit]:
    """Re-point, remove or keep each old-API import/alias; withdraw fixes that cannot stand."""
    old_bindings = _old_api_bindings(context)
    blocked = _withdraw_blocked_fixes(context, old_bindings)
    edits: list[Edit] = []
    for statement, changes in _plan_binding_changes(context, old_bindings, blocked).values():
        edits.extend(_rewrite_binding_statement(context, statement, changes))
    edits.extend(_dotted_import_edits(context))
    return edits


def _old_api_bindings(context: Context) -> list[Binding]:
    """Every import or alias binding a name of the old API (or the shim's experimental module)."""
    names = context.names
    return [
        binding
        for scope_bindings in _all_bindings(context)
        for binding in scope_bindings
        if (binding.is_import or binding.alias_of is not None)
        and (q := names.binding_qualified(binding)) is not None
        and (
            table.is_old_namespace(q)
            or table.classify(q) is not None
            or q == table.SHIM_EXPERIMENTAL
        )
    ]


def _withdraw_blocked_fixes(context: Context, old_bindings: list[Binding]) -> set[int]:
    """Withdraw the fixes that go through a binding still read by unrewritten code.

    Returns the ids of those blocked bindings, which stay as written.
    """
    names = context.names
    alias_loads = {
        id(b): context.loads_in(b.alias_of) for b in old_bindings if b.alias_of is not None
    }
    aliases = [b for b in old_bindings if id(b) in alias_loads]
    # Withdrawing a fix un-rewrites its uses, which can block another binding: repeat until stable.
    while True:
        consumed = {use for fix in context.fixes if fix.active for use in fix.consumes}
        # An alias of an old name (`LSO = mp.LossScaleOptimizer`) whose every use is rewritten is
        # re-pointed or removed with them, so its own read of `mp` is taken care of too. (An
        # alias nobody reads stays as written, and so do its reads.)
        growing = True
        while growing:
            growing = False
            for alias in aliases:
                uses = names.uses(alias)
                if (
                    uses
                    and not alias_loads[id(alias)] <= consumed
                    and all(id(u) in consumed for u in uses)
                ):
                    consumed |= alias_loads[id(alias)]
                    growing = True
        blocked = {
            id(b) for b in old_bindings if any(id(use) not in consumed for use in names.uses(b))
        }
        # ... and an alias that reads a blocked binding cannot be re-pointed: it is blocked too,
        # or a fix through it would rewrite a call while the alias still names the old class.
        growing = True
        while growing:
            growing = False
            for alias in aliases:
                if id(alias) not in blocked and any(
                    id(u) in alias_loads[id(alias)]
                    for other in old_bindings
                    if id(other) in blocked
                    for u in names.uses(other)
                ):
                    blocked.add(id(alias))
                    growing = True
        withdrawn = [fix for fix in context.fixes if fix.active and fix.through & blocked]
        if not withdrawn:
            return blocked
        for fix in withdrawn:
            fix.active = False
            context.manual(
                fix.node,
                fix.code,
                f"{fix.manual} (not rewritten: another use of the same import or alias needs "
                "manual migration first)",
            )


def _plan_binding_changes(
    context: Context, old_bindings: list[Binding], blocked: set[int]
) -> dict[int, tuple[ast.stmt, list[tuple[Binding, str | None]]]]:
    """Per import/alias statement, each binding in it to re-point (new name) or remove (None)."""
    names = context.names
    through = {b for fix in context.fixes if fix.active for b in fix.through}
    dropped = {use for fix in context.fixes if fix.active for use in fix.dropped}
    plans: dict[int, tuple[ast.stmt, list[tuple[Binding, str | None]]]] = {}

    def plan(binding: Binding, rebound: str | None) -> None:
        assert binding.statement is not None
        plans.setdefault(id(binding.statement), (binding.statement, []))[1].append(
            (binding, rebound)
        )

    for binding in old_bindings:
        if id(binding) in blocked:
            continue  # still read by code left for manual work, which was reported there
        statement = binding.statement
        assert statement is not None  # imports and aliases are statements
        uses = names.uses(binding)
        if not uses and not binding.is_import:
            continue  # an alias nobody reads: not ours to remove
        qualified = names.binding_qualified(binding) or ""
        rebound = table.new_home(qualified, context.target) if id(binding) in through else None
        if id(binding) in through and rebound is None:
            continue
        if rebound is None and binding.alias_of is not None:
            # The alias statement goes, and what it read.
            dropped |= context.loads_in(binding.alias_of)
        if not uses and qualified.startswith(table.SHIM_MODULE + "."):
            # The shim's experimental names still exist: an unused import of them is not ours.
            continue
        if not uses and line_allows(context, statement):
            code = (table.classify(qualified) or ("LSO012", ""))[0]
            context.findings.append(
                Finding(
                    statement.lineno,
                    context.source.column(statement),
                    code,
                    f"unused import of the removed {table.display(qualified)} removed",
                    fixed=True,
                )
            )
        elif not uses:
            continue
        plan(binding, rebound)
    # Any other import whose every read was rewritten away (`import tensorflow as tf` once the only
    # `tf.keras.mixed_precision.experimental.X` became `compat_lso.X`) goes too.
    old = {id(b) for b in old_bindings}
    for scope_bindings in _all_bindings(context):
        for binding in scope_bindings:
            uses = names.uses(binding)
            if (
                binding.is_import
                and id(binding) not in old
                and uses
                and all(id(u) in dropped for u in uses)
            ):
                plan(binding, None)
    return plans


def _keep_blocks_non_empty(context: Context, edits: list[Edit]) -> list[Edit]:
    """A block whose every statement is deleted (`try:` holding only old imports) keeps a `pass`.

    Each deletion only sees its own statement, so two removed imports that were a block's only
    statements would leave `try:` with nothing under it.
    """
    source = context.source
    deletions = {(e.start, e.end): index for index, e in enumerate(edits) if not e.text}
    bodies = {
        id(body): body for body in context.names.body_of.values() if body is not context.tree.body
    }
    edits = list(edits)
    for body in bodies.values():
        spans = [source.lines(statement) for statement in body]
        if not all(span in deletions for span in spans):
            continue
        line_start, line_end = spans[-1]
        start, _ = source.span(body[-1])
        removed = source.text[line_start:line_end]
        newline = removed[len(removed.rstrip("\r\n")) :]
        edits[deletions[spans[-1]]] = Edit(
            line_start, line_end, source.text[line_start:start] + "pass" + newline
        )
    return edits


def _all_bindings(context: Context) -> Iterable[list[Binding]]:
    for scope in context.names.scopes:
        yield from scope.bindings.values()


def _rewrite_binding_statement(
    context: Context, statement: ast.stmt, changes: list[tuple[Binding, str | None]]
) -> list[Edit]:
    source = context.source
    if isinstance(statement, ast.Assign):
        binding, rebound = changes[0]
        alias_of = binding.alias_of
        assert alias_of is not None  # only aliases (`name = a.b.c`) are planned from assignments
        if rebound is not None:
            spelled = context.spell(alias_of, rebound)
            if spelled is None or spelled.through is not None:
                return []
            return [context.edit(alias_of, spelled.text)]
        return [delete_statement(context, statement)]
    assert isinstance(statement, (ast.Import, ast.ImportFrom))
    by_alias = {id(binding.node): rebound for binding, rebound in changes}
    kept: list[str] = []
    imports: list[str] = []  # `import a.b as c` re-pointed
    from_imports: dict[str, list[str]] = {}  # module -> names, so one statement per module
    for alias in statement.names:
        written = alias.name + (f" as {alias.asname}" if alias.asname else "")
        if id(alias) not in by_alias:
            kept.append(written)
            continue
        rebound = by_alias[id(alias)]
        if rebound is None:
            continue  # every use was rewritten away: the import goes
        module, _, member = rebound.rpartition(".")
        if isinstance(statement, ast.Import):
            imports.append(f"import {rebound}" + (f" as {alias.asname}" if alias.asname else ""))
        else:
            # Without an alias the local name follows the new member (the uses were renamed to it).
            name = member if alias.asname in (None, member) else f"{member} as {alias.asname}"
            from_imports.setdefault(module, []).append(name)
    statements: list[str] = []
    if kept:
        if isinstance(statement, ast.Import):
            statements.append("import " + ", ".join(kept))
        else:
            statements.append(
                f"from {'.' * statement.level}{statement.module or ''} import " + ", ".join(kept)
            )
    statements.extend(dict.fromkeys(imports))
    statements.extend(
        f"from {module} import {', '.join(dict.fromkeys(names))}"
        for module, names in from_imports.items()
    )
    if not statements:
        return [delete_statement(context, statement)]
    start, end = source.span(statement)
    line_start = source.line_starts[statement.lineno - 1]
    indent = source.text[line_start:start]
    own_line = not indent.strip()
    separator = (source.newline + indent) if own_line else "; "
    return [Edit(start, end, separator.join(statements))]


def _dotted_import_edits(context: Context) -> list[Edit]:
    """`import tensorflow.keras.mixed_precision.experimental` -> its parent, which still exists.

    Such an import binds only `tensorflow`, so re-pointing it changes no name: it is safe whatever
    the uses did, and it stops the import itself from failing.
    """
    edits = []
    for node in context.names.imports:
        if not line_allows(context, node):
            continue
        if not any(
            alias.asname is None and alias.name in table.KERAS_EXPERIMENTAL for alias in node.names
        ):
            continue
        written = [
            (
                table.KERAS_EXPERIMENTAL.get(alias.name, alias.name)
                if alias.asname is None
                else alias.name
            )
            + (f" as {alias.asname}" if alias.asname else "")
            for alias in node.names
        ]
        edits.append(context.edit(node, "import " + ", ".join(written)))
    return edits


def _has_shim_import(context: Context) -> bool:
    return any(
        isinstance(b.node, ast.alias)
        and b.name == table.SHIM_MODULE
        and b.qualified == table.SHIM_MODULE
        for b in context.names.module_scope.bindings.get(table.SHIM_MODULE, [])
    )


def _import_edit(context: Context, statement: str) -> Edit:
    """Insert an import line before the first module-level import (after docstring, __future__)."""
    source = context.source
    body = context.tree.body
    anchor: ast.stmt | None = None
    after: ast.stmt | None = None
    for index, node in enumerate(body):
        if (
            index == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            after = node
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            after = node
            continue
        anchor = node if isinstance(node, (ast.Import, ast.ImportFrom)) else None
        break
    if anchor is None:
        anchor = next(
            (
                n
                for n in body
                if isinstance(n, (ast.Import, ast.ImportFrom))
                and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")
            ),
            None,
        )
    if anchor is not None and anchor.col_offset == 0:
        position = source.line_starts[anchor.lineno - 1]
        return Edit(position, position, statement + source.newline)
    if after is not None:
        end_line = end_of(after)[0]
        if end_line < len(source.line_starts):  # a line break follows it
            position = source.line_starts[end_line]
            return Edit(position, position, statement + source.newline)
        return Edit(len(source.text), len(source.text), source.newline + statement + source.newline)
    # Nothing to anchor on: go after the leading comments (a shebang, an encoding cookie, a
    # licence).
    position = 0
    for lineno in range(1, len(source.line_starts) + 1):
        if not source.line(lineno).lstrip().startswith("#"):
            break
        position = (
            source.line_starts[lineno] if lineno < len(source.line_starts) else len(source.text)
        )
    prefix = "" if position == 0 or source.text[position - 1] in "\r\n" else source.newline
    return Edit(position, position, prefix + statement + source.newline)


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    pieces: list[str] = []
    position = 0
    for edit in ordered:
        if edit.start < position:
            raise MigrationError(
                f"internal error: overlapping edits at offset {edit.start}; file left unchanged"
            )
        pieces.append(text[position : edit.start])
        pieces.append(edit.text)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)
