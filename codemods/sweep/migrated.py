"""The migrated module as the sweep reads it: its tree, its names, and where each node was.

The sweep (codemods/sweep/findings.py) finds breaks in the migrated text but reports them at their
lines in the original, through the edits that turned one into the other (`Positions`). Shared by the
detection (codemods/sweep/detect.py) and the wording (codemods/sweep/wording.py), below both.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Sequence

from codemods import table
from codemods.meaning.names import Analysis
from codemods.meaning.version_gates import Gates
from codemods.source import Edit, Located, Source, end_of, simple_statement_ends
from codemods.table import Target


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


class Swept:
    """The migrated module as the sweep reads it, and where its nodes are in the original."""

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
        self.gates = Gates(tree, names)
        self._statement_ends: dict[int, int] | None = None
        self._calls: dict[int, ast.Call] = {}

    def place(self, node: Located) -> tuple[int, int, int]:
        """(offset, line, column) of `node` in the original text; line and column 1-based."""
        offset = self.positions.original(self.out.offset(node.lineno, node.col_offset))
        line = bisect.bisect_right(self.original.line_starts, offset)
        return offset, line, offset - self.original.line_starts[line - 1] + 1

    def end(self, node: Located) -> int:
        """The offset in the original text where `node` ends."""
        return self.positions.original(self.out.offset(*end_of(node)))

    def original_line(self, offset: int) -> int:
        return bisect.bisect_right(self.original.line_starts, self.positions.original(offset))

    def suppression_lines(self, node: Located) -> tuple[int, ...]:
        """The original lines whose suppression comment covers `node`, as Context.suppresses
        reads them: where it starts, where it ends, and the last line of its simple statement."""
        if self._statement_ends is None:
            self._statement_ends = simple_statement_ends(self.tree)
            # A rule asks about the call of a class it reports, so the call's end counts too.
            self._calls = {
                id(call.func): call for call in ast.walk(self.tree) if isinstance(call, ast.Call)
            }
        last = self._statement_ends.get(node.lineno, node.lineno)
        offsets = (
            self.out.offset(node.lineno, node.col_offset),
            self.out.offset(*end_of(node)),
            self.out.offset(*end_of(self._calls.get(id(node), node))),
            self.out.line_starts[last - 1],
        )
        return tuple(dict.fromkeys(self.original_line(offset) for offset in offsets))

    def line(self, node: ast.AST) -> int:
        assert isinstance(node, (ast.expr, ast.stmt, ast.alias, ast.keyword, ast.arg))
        return self.place(node)[1]

    def gone(self, qualified: str) -> bool:
        return table.gone(qualified, self.target) is not None
