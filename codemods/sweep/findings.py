"""The last stage of a migration: one sweep over the migrated module for what the target lacks.

After the rules ran and the engine settled the imports, the migrated text is parsed again (the
engine's own check parse) and its names resolved the way the rules resolve them. Every reference
that resolves, by meaning, to something the target's TensorFlow/Keras no longer has or does not
understand (`table.gone` and codemods/table/removed.py) must then be either rewritten
(it is no longer there) or reported: by a finding about it (at its own line), or about a construct
that holds it (a call reported as a whole holds its arguments).
Whatever is left is reported here, with a code of its own:

- LSO100: a gap in the rules (no rule rewrote or reported it);
- LSO101: an import or alias of a removed name that stays (it fails at import time);
- LSO102: a use through a binding the codemod cannot follow (codemods/meaning/values.py says how it
came);
- LSO103: a removed module or class that escapes (returned, passed, stored);
- LSO104: any of these under a version gate or feature detection
(codemods/meaning/version_gates.py); a note where no supported TensorFlow runs that branch
(codemods/meaning/dead_branches.py).

A suppression comment on the line (bare, with the sweep's code, or with the code of the rule the
name falls under) and `--skip`/`--only` of either code are respected: the user said so.
`codemods.guarantee.unreported(text, target)` states the guarantee as a function, for the
tests.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from codemods import table
from codemods.meaning.module import Context, through_private
from codemods.meaning.names import Analysis
from codemods.source import Edit, Finding, Source, parse
from codemods.sweep.detect import Flag, find
from codemods.sweep.migrated import Swept
from codemods.table import Target


def run(context: Context, text: str, tree: ast.Module, edits: Sequence[Edit]) -> list[Finding]:
    """The pipeline stage: findings for every flag nothing reported (and records their spans)."""
    if not table.SWEEP_CODES & context.enabled:
        return []
    same = text == context.source.text
    swept = Swept(
        context.source,
        context.source if same else Source(text),
        tree,
        Analysis(tree, walk=context.names.walk) if same else Analysis(tree),
        edits=edits,
        target=context.target,
    )
    findings = []
    for flag, (start, line, col) in uncovered(swept, context.reported, context.enabled):
        note = flag.note(swept)
        findings.append(
            Finding(
                line,
                col,
                flag.code,
                flag.message,
                fixed=note,
                note=note,
                help=flag.help,
                reason="" if note else flag.reason,
            )
        )
        context.reported.append((start, max(start + 1, swept.end(flag.node))))
    return findings


def flags(text: str, target: Target) -> list[Finding]:
    """Everything in `text`, as it stands, that breaks on `target`, reported or not, each with the
    code and message the sweep would give it. Raises SyntaxError when `text` does not parse."""
    source = Source(text)
    tree = parse(text)
    swept = Swept(source, source, tree, Analysis(tree), edits=(), target=target)
    found = []
    for flag in find(swept):
        _, line, col = swept.place(flag.node)
        found.append(
            Finding(
                line, col, flag.code, flag.message, fixed=False, help=flag.help, reason=flag.reason
            )
        )
    return found


def _suppressed(swept: Swept, flag: Flag) -> bool:
    """A comment covering the flagged node suppresses it: bare, or naming the sweep's code or
    the code of the rule the name falls under."""
    if "compat-lso" not in swept.original.text:
        return False  # no suppression comment at all (the common case: no lines to work out)
    for line in swept.suppression_lines(flag.node):
        codes = swept.original.suppressed_codes(line)
        if codes is not None and (not codes or flag.code in codes or flag.natural in codes):
            return True
        if codes and "LSO014" in codes and through_private(swept.names, flag.node):
            return True  # a private name read as its public one (table.public_of_private)
    return False


def uncovered(
    swept: Swept, reported: Sequence[tuple[int, int]], enabled: frozenset[str] | None
) -> Iterable[tuple[Flag, tuple[int, int, int]]]:
    """The flags nothing reports: not inside a construct a finding reports (the reference itself,
    or a call or statement reported as a whole), not suppressed on their line, not switched off
    (`enabled`; None: all on). A finding about something else on the same line does not count."""
    for flag in find(swept):
        if enabled is not None and flag.natural and flag.natural not in enabled:
            continue
        place = swept.place(flag.node)
        start = place[0]
        if any(a <= start < b for a, b in reported):
            continue
        if _suppressed(swept, flag):
            continue
        if enabled is not None and flag.code not in enabled:
            continue
        yield flag, place
