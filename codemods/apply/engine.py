"""The migration of one module's source text: analyse, run the rules, fix the imports, splice.

Rules (codemods.rules) propose fixes and findings through a `codemods.meaning.module.Context`. Once
every rule has run, the bindings of the old names are settled together (codemods/apply/imports.py)
and, for the shim target, `import compat_lso` joins the import block
(codemods/apply/shim_import.py). Text outside the edited spans is never touched, so comments and
formatting elsewhere survive by construction, and the result is parsed again: that tree is what the
final sweep (codemods/sweep/findings.py) checks for anything the target lacks that nothing reported.
The stages hand their results down; what they share (the source, edits, findings, the result) lives
below them all, in codemods/source.py.

Why edits over `ast` spans and not a libcst transformer: a libcst parse plus a transformer pass
costs about 2x the parse before any rule runs, and findings need line:column positions, which
libcst only gives through its PositionProvider (another full pass). `ast` parses in about 0.06x a
libcst parse with positions included, and span edits touch nothing else. libcst still runs the
same transform for `python -m libcst.tool codemod` (codemods/commands/).
"""

from __future__ import annotations

import ast
import gc
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from codemods import table
from codemods.apply.imports import settle_bindings
from codemods.apply.shim_import import (
    has_shim_import,
    install_edit,
    installs_at_start,
    shim_import_edit,
)
from codemods.meaning.module import Context
from codemods.rules import run_rules
from codemods.source import (
    Edit,
    Finding,
    MigrationError,
    Result,
    Source,
    apply_edits,
    on_one_line,
    parse,
)
from codemods.sweep import findings as sweep_findings
from codemods.table import Target

__all__ = ["MigrationError", "Result", "apply_edits", "migrate", "parse"]


# -- the whole flow ------------------------------------------------------------------------------


def migrate(text: str, target: Target, enabled: Iterable[str] | None = None) -> Result:
    """Migrate one module's source. Raises MigrationError when it does not parse."""
    with _no_cycle_collection():
        return _migrate(text, target, enabled)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while one module migrates (as it was before, after).

    A migration builds two trees of up to 10^5 nodes that live until it returns, and the collector,
    triggered by allocations, scans them again and again for cycles they cannot have: 7% of a
    `--check` over real repositories. It leaves none either (nothing in the analysis refers back
    to what holds it; tests/codemods/test_codemod_resolve.py), so reference counting frees it all
    at the end and nothing waits for the collector when it runs again.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _migrate(text: str, target: Target, enabled: Iterable[str] | None) -> Result:
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


def _migrate_tree(
    text: str, tree: ast.Module, target: Target, enabled: Iterable[str] | None
) -> Result:
    source = Source(text)
    codes = frozenset(enabled) if enabled is not None else frozenset(table.RULES_BY_CODE)
    context = Context(source, tree, target, codes)
    run_rules(context)
    binding_edits = _settle(context)
    if context.kept_for:
        # An old import kept for a use left to the user held back rewrites through it: a second
        # pass writes those through another import where the module has one (`tf.keras...`).
        retry = Context(
            source, tree, target, codes, names=context.names, avoid=frozenset(context.kept_for)
        )
        run_rules(retry)
        retry_edits = _settle(retry)
        if sum(f.active for f in retry.fixes) > sum(f.active for f in context.fixes):
            context, binding_edits = retry, retry_edits
    edits = [edit for fix in context.fixes if fix.active for edit in fix.edits] + binding_edits
    edits = _keep_blocks_non_empty(context, _drop_edits_in_deleted_lines(edits))
    installs = any(fix.installs for fix in context.fixes if fix.active)
    needs_shim = installs or any(f"{table.SHIM_MODULE}." in edit.text for edit in edits)
    if needs_shim and not has_shim_import(context.names):
        edits.append(shim_import_edit(source, tree))
    if installs and not installs_at_start(tree):
        # After the import, at the same offset or later; past an import line the migration removes.
        edits.append(_clear_of_removed_lines(install_edit(source, tree), edits, source.newline))
    new_text = apply_edits(text, edits)
    findings = context.findings + [
        Finding(
            fix.node.lineno,
            source.column(fix.node),
            fix.code,
            fix.message,
            fixed=True,
            help=fix.help,
        )
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
    findings += sweep_findings.run(context, new_text, new_tree, edits)
    # One line each, the fact and the help: a quoted excerpt that spans lines is cut.
    findings = [on_one_line(finding, (text, new_text)) for finding in findings]
    return Result(new_text, sorted(set(findings)), edits, list(context.reported))


def _clear_of_removed_lines(install: Edit, edits: list[Edit], newline: str) -> Edit:
    """`compat_lso.install()` goes at the end of the last import's line; where the migration
    removes that import (`import tensorflow as tf` that nothing reads any more), it goes where
    the removed text ends, at the start of the next line, with a blank line after it."""
    position, moved = install.start, False
    while hit := next((e for e in edits if e.start <= position < e.end), None):
        position, moved = hit.end, True
    if not moved:
        return install
    return Edit(position, position, install.text.removeprefix(newline) + 2 * newline)


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


def _drop_edits_in_deleted_lines(edits: list[Edit]) -> list[Edit]:
    """A rewrite inside a statement that another edit deletes whole goes with it.

    An alias whose every use was rewritten (`mp = tf.keras.mixed_precision.experimental`, read
    once, by an alias the migration also removed) is deleted by the bindings' settlement, while
    LSO025 may have rewritten the module it holds: the statement is gone, and so is the rewrite
    of its value. Insertions at either end of a deleted span stay (the shim's import at 0).
    """
    deleted = [(e.start, e.end) for e in edits if not e.text and e.start < e.end]

    def inside(edit: Edit) -> bool:
        return any(
            start <= edit.start
            and edit.end <= end
            and (edit.start, edit.end) != (start, end)
            and not (edit.start == edit.end and edit.start in (start, end))
            for start, end in deleted
        )

    return [edit for edit in edits if not inside(edit)]


def _settle(context: Context) -> list[Edit]:
    """settle_bindings, and again without the fixes whose edits collide with its edits.

    A module alias bound two ways (`mp = tf.keras.mixed_precision.experimental` and an import of
    the same module as `mp`) is LSO025's to rewrite as a value, and the bindings' to re-point
    when every use of it is rewritten through it (`mp.global_policy()`). The bindings edit a
    statement only when all its uses are taken care of, so their re-pointing stands and LSO025's
    rewrite of the same text is withdrawn: nothing is left to report.
    """
    edits = settle_bindings(context)
    colliding = [
        fix
        for fix in context.fixes
        if fix.active and any(_collide(mine, theirs) for mine in fix.edits for theirs in edits)
    ]
    if not colliding:
        return edits
    for fix in colliding:
        fix.active = False
    return settle_bindings(context)


def _collide(mine: Edit, theirs: Edit) -> bool:
    """Two edits that touch the same text, unless `theirs` deletes a span holding all of mine
    (_drop_edits_in_deleted_lines)."""
    if not (mine.start < theirs.end and theirs.start < mine.end):
        return False
    return not (not theirs.text and theirs.start <= mine.start and mine.end <= theirs.end)
