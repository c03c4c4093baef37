"""After the rules: settle every import or alias of an old name, and withdraw what cannot stand.

An import or alias whose every use was rewritten is re-pointed to the new module (keeping the
user's alias) or removed when nothing reads it any more; one that is still read by code no rule
could rewrite stays, and the fixes that depended on re-pointing it are withdrawn and reported
instead (at their own lines, as manual findings).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codemods import table
from codemods.meaning.module import Context, delete_statement, line_allows
from codemods.meaning.names import Binding
from codemods.source import Edit, Finding


def settle_bindings(context: Context) -> list[Edit]:
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
        by_id = {id(b): b for b in old_bindings}
        for fix in withdrawn:
            fix.active = False
            context.kept_for |= fix.through & blocked
            lines = sorted(
                {
                    use.lineno
                    for binding in fix.through & blocked
                    for use in names.uses(by_id[binding])
                    if id(use) not in consumed
                }
            )
            where = f" (line {', '.join(map(str, lines))})" if lines else ""
            context.manual(
                fix.node,
                fix.code,
                f"{fix.manual} not rewritten: its import or alias has another use left to you"
                + where,
                reason="follows",
                help="migrate that other use first (or use --target shim), then run again",
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
    # `tf.keras.mixed_precision.experimental.X` became `compat_lso.X`) goes too; but not the
    # shim's own `import compat_lso`, which the rewritten code may read (`mp =
    # compat_lso.experimental` removed, its uses spelled `compat_lso.X` through that import).
    old = {id(b) for b in old_bindings}
    for scope_bindings in _all_bindings(context) if dropped else ():
        for binding in scope_bindings:
            if (
                binding.is_import
                and id(binding) not in old
                and binding.name != table.SHIM_MODULE
                and (uses := names.uses(binding))
                and all(id(u) in dropped for u in uses)
            ):
                plan(binding, None)
    return plans


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
