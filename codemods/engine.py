"""The migration of one module's source text: analyse, run the rules, fix the imports, splice.

Rules (codemods.rules) propose fixes and findings through a `codemods.context.Context`. Once every
rule has run, the bindings of
the old names are settled together: an import or alias whose every use was rewritten is re-pointed
to the new module (keeping the user's alias) or removed when nothing reads it any more; one that is
still read by code no rule could rewrite stays, and the fixes that depended on re-pointing it are
withdrawn and reported instead. Text outside the edited spans is never touched, so comments and
formatting elsewhere survive by construction, and the result is parsed again before it is returned.

Why edits over `ast` spans and not a libcst transformer: a libcst parse plus a transformer pass
costs about 2x the parse before any rule runs, and findings need line:column positions, which
libcst only gives through its PositionProvider (another full pass). `ast` parses in about 0.06x a
libcst parse with positions included, and span edits touch nothing else. libcst still runs the
same transform for `python -m libcst.tool codemod` (codemods/commands/).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from codemods import table
from codemods.context import SUPPRESSION, Context, Edit, Finding, Source, delete_statement, line_allows
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

    def changed(self, original: str) -> bool:
        return self.text != original


# -- the whole flow ------------------------------------------------------------------------------


def migrate(text: str, target: Target, enabled: Iterable[str] | None = None) -> Result:
    """Migrate one module's source. Raises MigrationError when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as error:
        where = f"{error.lineno}:{error.offset or 0}: " if isinstance(error, SyntaxError) and error.lineno else ""
        reason = error.msg if isinstance(error, SyntaxError) else str(error)
        raise MigrationError(f"{where}does not parse: {reason}") from None
    source = Source(text)
    codes = frozenset(enabled) if enabled is not None else frozenset(table.RULES_BY_CODE)
    context = Context(source, tree, target, codes)
    run_rules(context)
    binding_edits = _settle_bindings(context)
    edits = [edit for fix in context.fixes if fix.active for edit in fix.edits] + binding_edits
    needs_shim = any(f"{table.SHIM_MODULE}." in edit.text for edit in edits)
    if needs_shim and not _has_shim_import(context):
        edits.append(_import_edit(context, f"import {table.SHIM_MODULE}"))
    new_text = apply_edits(text, edits)
    findings = context.findings + [
        Finding(fix.node.lineno, source.column(fix.node), fix.code, fix.message, fixed=True)
        for fix in context.fixes if fix.active
    ]
    if new_text != text:
        try:
            ast.parse(new_text)
        except SyntaxError as error:  # a bug in a rule: never write it
            raise MigrationError(f"internal error, the rewrite would not parse ({error}); file left unchanged") from None
    return Result(new_text, sorted(set(findings)), sorted(edits, key=lambda e: (e.start, e.end)))


def _settle_bindings(context: Context) -> list[Edit]:
    """Re-point, remove or keep each old-API import/alias; withdraw fixes that cannot stand."""
    names = context.names
    old_bindings = [
        binding
        for scope_bindings in _all_bindings(context)
        for binding in scope_bindings
        if (binding.is_import or binding.alias_of is not None)
        and (q := names.binding_qualified(binding)) is not None
        and (table.is_old_namespace(q) or table.classify(q) is not None or q == table.SHIM_EXPERIMENTAL)
    ]
    # Withdrawing a fix un-rewrites its uses, which can block another binding: repeat until stable.
    while True:
        consumed = {use for fix in context.fixes if fix.active for use in fix.consumes}
        blocked = {id(b) for b in old_bindings if any(id(use) not in consumed for use in names.uses(b))}
        withdrawn = [fix for fix in context.fixes if fix.active and fix.through & blocked]
        if not withdrawn:
            break
        for fix in withdrawn:
            fix.active = False
            context.findings.append(Finding(fix.node.lineno, context.source.column(fix.node), fix.code,
                                            f"{fix.manual} (not rewritten: another use of the same import or alias "
                                            "needs manual migration first)", fixed=False))
    through = {b for fix in context.fixes if fix.active for b in fix.through}
    dropped = {use for fix in context.fixes if fix.active for use in fix.dropped}
    plans: dict[int, tuple[ast.stmt, list[tuple[Binding, str | None]]]] = {}

    def plan(binding: Binding, rebound: str | None) -> None:
        assert binding.statement is not None
        plans.setdefault(id(binding.statement), (binding.statement, []))[1].append((binding, rebound))

    for binding in old_bindings:
        if id(binding) in blocked:
            continue  # still read by code left for manual work, which was reported there
        uses = names.uses(binding)
        if not uses and not binding.is_import:
            continue  # an alias nobody reads: not ours to remove
        qualified = names.binding_qualified(binding) or ""
        rebound = table.new_home(qualified, context.target) if id(binding) in through else None
        if id(binding) in through and rebound is None:
            continue
        if rebound is None and binding.alias_of is not None:
            dropped |= context.loads_in(binding.alias_of)  # the alias statement goes, and what it read
        if not uses and qualified.startswith(table.SHIM_MODULE + "."):
            continue  # the shim's experimental names still exist: an unused import of them is not ours
        if not uses and line_allows(context, binding.statement):
            code = (table.classify(qualified) or ("LSO012", ""))[0]
            context.findings.append(Finding(binding.statement.lineno, context.source.column(binding.statement), code,
                                            f"unused import of the removed {table.display(qualified)} removed",
                                            fixed=True))
        elif not uses:
            continue
        plan(binding, rebound)
    # Any other import whose every read was rewritten away (`import tensorflow as tf` once the only
    # `tf.keras.mixed_precision.experimental.X` became `compat_lso.X`) goes too.
    old = {id(b) for b in old_bindings}
    for scope_bindings in _all_bindings(context):
        for binding in scope_bindings:
            uses = names.uses(binding)
            if binding.is_import and id(binding) not in old and uses and all(id(u) in dropped for u in uses):
                plan(binding, None)
    edits: list[Edit] = []
    for statement, changes in plans.values():
        edits.extend(_rewrite_binding_statement(context, statement, changes))
    edits.extend(_dotted_import_edits(context))
    return edits


def _all_bindings(context: Context) -> Iterable[list[Binding]]:
    for scope in context.names.scopes:
        yield from scope.bindings.values()


def _rewrite_binding_statement(context: Context, statement: ast.stmt,
                               changes: list[tuple[Binding, str | None]]) -> list[Edit]:
    source = context.source
    if isinstance(statement, ast.Assign):
        binding, rebound = changes[0]
        if rebound is not None or not context.names.uses(binding):
            spelled = context.spell(binding.alias_of, rebound) if rebound else None
            if rebound is not None:
                if spelled is None or spelled.through is not None:
                    return []
                return [context.edit(binding.alias_of, spelled.text)]
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
            statements.append(f"from {'.' * statement.level}{statement.module or ''} import " + ", ".join(kept))
    statements.extend(dict.fromkeys(imports))
    statements.extend(f"from {module} import {', '.join(dict.fromkeys(names))}" for module, names in from_imports.items())
    if not statements:
        return [delete_statement(context, statement)]
    start, end = source.span(statement)
    line_start = source.line_starts[statement.lineno - 1]
    indent = source.text[line_start:start]
    own_line = not indent.strip()
    separator = (source.newline + indent) if own_line else "; "
    return [Edit(start, end, separator.join(statements))]


def _dotted_import_edits(context: Context) -> list[Edit]:
    """`import tensorflow.keras.mixed_precision.experimental` -> the parent module, which still exists.

    Such an import binds only `tensorflow`, so re-pointing it changes no name: it is safe whatever
    the uses did, and it stops the import itself from failing.
    """
    edits = []
    for node in context.names.imports:
        if SUPPRESSION.search(context.source.line(node.lineno)):
            continue
        if not any(alias.asname is None and alias.name in table.KERAS_EXPERIMENTAL for alias in node.names):
            continue
        written = [
            (table.KERAS_EXPERIMENTAL.get(alias.name, alias.name) if alias.asname is None else alias.name)
            + (f" as {alias.asname}" if alias.asname else "")
            for alias in node.names
        ]
        edits.append(context.edit(node, "import " + ", ".join(written)))
    return edits


def _has_shim_import(context: Context) -> bool:
    return any(
        isinstance(b.node, ast.alias) and b.name == table.SHIM_MODULE and b.qualified == table.SHIM_MODULE
        for b in context.names.module_scope.bindings.get(table.SHIM_MODULE, [])
    )


def _import_edit(context: Context, statement: str) -> Edit:
    """Insert an import line before the first module-level import (after docstring and __future__)."""
    source = context.source
    body = context.tree.body
    anchor: ast.stmt | None = None
    after: ast.stmt | None = None
    for index, node in enumerate(body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            after = node
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            after = node
            continue
        anchor = node if isinstance(node, (ast.Import, ast.ImportFrom)) else None
        break
    if anchor is None:
        anchor = next((n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))
                       and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")), None)
    if anchor is not None and anchor.col_offset == 0:
        position = source.line_starts[anchor.lineno - 1]
        return Edit(position, position, statement + source.newline)
    if after is not None:
        if after.end_lineno < len(source.line_starts):
            position = source.line_starts[after.end_lineno]
            return Edit(position, position, statement + source.newline)
        return Edit(len(source.text), len(source.text), source.newline + statement + source.newline)
    # Nothing to anchor on: go after the leading comments (a shebang, an encoding cookie, a licence).
    position = 0
    for lineno in range(1, len(source.line_starts) + 1):
        if not source.line(lineno).lstrip().startswith("#"):
            break
        position = source.line_starts[lineno] if lineno < len(source.line_starts) else len(source.text)
    prefix = "" if position == 0 or source.text[position - 1] in "\r\n" else source.newline
    return Edit(position, position, prefix + statement + source.newline)


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    pieces: list[str] = []
    position = 0
    for edit in ordered:
        if edit.start < position:
            raise MigrationError(f"internal error: overlapping edits at offset {edit.start}; file left unchanged")
        pieces.append(text[position:edit.start])
        pieces.append(edit.text)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)
