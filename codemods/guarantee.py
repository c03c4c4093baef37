"""The codemod's guarantee as a function: nothing that breaks on the target is left unreported.

The sweep (codemods/sweep/findings.py) is the pipeline's last stage; this runs the whole pipeline on
a text and asks the sweep's question again from outside, for the tests. It sits above the engine,
which it calls, so that the stages below it need not know about it.
"""

from __future__ import annotations

from codemods.apply.engine import migrate
from codemods.io.prefilter import may_contain_targets
from codemods.meaning.names import Analysis
from codemods.source import Finding, Result, Source, parse
from codemods.sweep.findings import flags, uncovered
from codemods.sweep.migrated import Swept
from codemods.table import Target


def unreported(text: str, target: Target, result: Result | None = None) -> list[Finding]:
    """What the sweep would flag in the migration of `text` that no finding reports: the guarantee
    holds when this is empty. A file the prefilter skips is never migrated: then every flag in it
    counts. `result`: the migration of `text` to check, when the caller already has it. Raises
    SyntaxError when `text` does not parse."""
    if not may_contain_targets(text.encode("utf-8"), target):
        return flags(text, target)
    if result is None:
        result = migrate(text, target)
    tree = parse(result.text)
    swept = Swept(
        Source(text),
        Source(result.text),
        tree,
        Analysis(tree),
        edits=result.edits,
        target=target,
    )
    return [
        Finding(line, col, flag.code, flag.message, fixed=False, help=flag.help, reason=flag.reason)
        for flag, (_, line, col) in uncovered(swept, result.reported, None)
    ]
