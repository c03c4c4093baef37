"""Where a finding is: in the original text (--check, --diff) or in the text as written.

In write mode a finding points into the file the user now has: every edit before it (an inserted
`import compat_lso` line, a shorter name) shifts it; one that starts inside a rewritten span points
at the start of the replacement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from codemods.source import Edit, Finding, Source


def as_written(
    findings: Sequence[Finding], original: str, edits: Sequence[Edit], written: str
) -> list[Finding]:
    """`findings`, positioned in `original`, moved to where they are in `written`."""
    if not edits:
        return list(findings)
    before, after = Source(original), Source(written)
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    moved = []
    for finding in findings:
        offset = _offset(before, finding)
        position = offset
        shift = 0
        for edit in ordered:
            if edit.end <= offset:  # before it (an insertion right at it too: it pushes it on)
                shift += len(edit.text) - (edit.end - edit.start)
                position = offset + shift
            else:
                if edit.start <= offset:  # inside a rewritten span: at the replacement's start
                    position = edit.start + shift
                break
        line, col = _line_col(after, position)
        moved.append(replace(finding, line=line, col=col))
    return sorted(moved)


def _offset(source: Source, finding: Finding) -> int:
    line = min(max(finding.line, 1), len(source.line_starts))
    return min(source.line_starts[line - 1] + finding.col - 1, len(source.text))


def _line_col(source: Source, offset: int) -> tuple[int, int]:
    starts = source.line_starts
    low, high = 0, len(starts) - 1
    while low < high:  # the last line start at or before the offset
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low + 1, offset - starts[low] + 1
