"""The source text and what the pipeline's stages hand each other.

Positions (`ast`'s 1-based lines and UTF-8 byte columns) become offsets in `Source`; rules and the
import settlement produce `Edit`s over those offsets and `Finding`s; the engine hands a `Result`
to whoever writes or reports it. Every stage imports this module and it imports none of them, so
data flows one way: CLI -> discovery -> prefilter -> parse -> resolve -> rules -> sweep ->
report/write.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate
from typing import TypeAlias

_NEWLINE = re.compile(r"\r\n|\r|\n")
SUPPRESSION = re.compile(r"#\s*compat-lso:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]+)\])?")

# The nodes that carry a source position: the only ones rules fix, report or edit.
Located: TypeAlias = ast.expr | ast.stmt | ast.alias | ast.keyword | ast.arg


def end_of(node: Located) -> tuple[int, int]:
    """The node's end (line, byte column); `ast.parse` always sets it, hand-built nodes may not."""
    if node.end_lineno is None or node.end_col_offset is None:
        raise ValueError(f"{type(node).__name__} node without an end position")
    return node.end_lineno, node.end_col_offset


@dataclass(frozen=True, order=True)
class Finding:
    line: int  # 1-based
    col: int  # 1-based, in characters
    code: str
    message: str  # what is wrong here (or what was rewritten), one short line
    fixed: bool  # True: rewritten (or would be, in --check/--diff); False: manual work left
    # A note: nothing to do, but a fact the user must see (a behaviour the output keeps or
    # accepts by design). Notes are `fixed` too, so that `not fixed` still means manual work.
    note: bool = False
    # The fix, one line (`help:` under the finding in text output); "" where there is none to
    # give (a rewrite says what it did in `message`).
    help: str = ""
    # Manual work only: why the place stays manual, one word of codemods/table/reasons.py
    # (`run-time`, `private`, ...); "" for a rewrite or a note.
    reason: str = ""


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


class Source:
    """Source text that turns `ast` positions (1-based line, UTF-8 byte column) into offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        if "\r" in text:
            self.line_starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]
        else:  # (the usual case, three times as fast)
            self.line_starts = [0, *accumulate(len(line) + 1 for line in text.split("\n")[:-1])]
        newline = _NEWLINE.search(text)
        self.newline = newline.group() if newline else "\n"

    def line(self, lineno: int) -> str:
        start = self.line_starts[lineno - 1]
        end = self.line_starts[lineno] if lineno < len(self.line_starts) else len(self.text)
        return self.text[start:end]

    def offset(self, lineno: int, col: int) -> int:
        line = self.line(lineno)
        if not line.isascii():
            col = len(line.encode("utf-8")[:col].decode("utf-8", "replace"))
        return self.line_starts[lineno - 1] + col

    def span(self, node: Located) -> tuple[int, int]:
        return self.offset(node.lineno, node.col_offset), self.offset(*end_of(node))

    def segment(self, node: Located) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def lines(self, node: Located) -> tuple[int, int]:
        """The offsets of the start of the node's first line and the end of its last line."""
        end_line = end_of(node)[0]
        end = self.line_starts[end_line] if end_line < len(self.line_starts) else len(self.text)
        return self.line_starts[node.lineno - 1], end

    def column(self, node: Located) -> int:
        return self.offset(node.lineno, node.col_offset) - self.line_starts[node.lineno - 1] + 1

    # -- suppression comments ----------------------------------------------------------------------
    _comments: dict[int, str] | None = None

    def suppressed_codes(self, lineno: int) -> frozenset[str] | None:
        """The codes a `# compat-lso: ignore[...]` comment on the line suppresses (empty: all);
        None when it has none. Only real comments count, not the same text inside a string."""
        if "compat-lso" not in self.text:  # the common case: no tokenizing at all
            return None
        if self._comments is None:
            self._comments = _comments(self.text)
        comment = self._comments.get(lineno)
        match = SUPPRESSION.search(comment) if comment is not None else None
        if match is None:
            return None
        codes = match.group("codes")
        return frozenset(c.strip() for c in codes.split(",")) if codes else frozenset()


_COMPOUND = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.Match,
)


def simple_statement_ends(tree: ast.Module) -> dict[int, int]:
    """Line -> the last line of the simple statement (not if/for/def...) that holds it."""
    ends: dict[int, int] = {}
    for statement in ast.walk(tree):
        if isinstance(statement, ast.stmt) and not isinstance(statement, _COMPOUND):
            last = end_of(statement)[0]
            for lineno in range(statement.lineno, last + 1):
                ends[lineno] = last
    return ends


def parent_map(tree: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> its parent, for every node under `tree`: one pass over the fields, about half
    the cost of `ast.walk` with `ast.iter_child_nodes`."""
    found: dict[int, ast.AST] = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        found[id(item)] = node
                        stack.append(item)
            elif isinstance(value, ast.AST):
                found[id(value)] = node
                stack.append(value)
    return found


def _comments(text: str) -> dict[int, str]:
    """Line number -> the comment on it, from the tokenizer (so never text inside a string)."""
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string
    except (tokenize.TokenError, SyntaxError):
        # The source parsed, so this is the tokenizer disagreeing with the parser on an edge
        # case: fall back to reading each line's text, as a suppression that suppresses too much
        # only leaves code as written.
        lines = text.splitlines()
        return {index + 1: line for index, line in enumerate(lines) if "#" in line}
    return comments


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


def parse(text: str) -> ast.Module:
    """`ast.parse`, without the warnings compiling the user's code can raise (`"\\d"` is a
    DeprecationWarning on 3.11 and a SyntaxWarning, shown by default, from 3.12): they are about
    the user's code, not the migration, and would be printed once per file otherwise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text)


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


def on_one_line(finding: Finding, texts: Sequence[str]) -> Finding:
    """`finding` with every excerpt of the code that spans lines cut at its first line end, in
    its fact and its help, so that each stays one line: `loss_scale=get(\n    flags)` ->
    `loss_scale=get(...`. A rule quotes code as written; `texts` are the code it may quote (the
    file, and the migrated file the sweep reads)."""
    message, help_ = cut_excerpts(finding.message, texts), cut_excerpts(finding.help, texts)
    if (message, help_) == (finding.message, finding.help):
        return finding
    return replace(finding, message=message, help=help_)


def cut_excerpts(text: str, codes: Sequence[str]) -> str:
    """`text` with each line end in it (only quoted code has one) and the excerpt's lines after it
    replaced by `...`: the rest of the excerpt is the longest run after the line end that one of
    `codes` has right after the same end of line (the first line's last characters anchor it);
    what follows is the finding's own text again."""
    while (line_end := _NEWLINE.search(text)) is not None:
        head, rest = text[: line_end.start()], text[line_end.start() :]
        newline = line_end.end() - line_end.start()
        followed = max((_followed(head, rest, code) for code in codes), default=0)
        if followed < newline:  # no code's line end: cut the break and its indentation only
            followed = len(rest) - len(rest[newline:].lstrip())
        text = head + "..." + rest[followed:]
    return text


def _followed(head: str, rest: str, code: str) -> int:
    """The length of the longest start of `rest` that `code` has right after the end of `head`
    (its last characters that `code` has before the same line end: the excerpt's first line)."""
    anchor = next(
        (head[-n:] for n in range(min(16, len(head)), 0, -1) if head[-n:] + rest[:1] in code), None
    )
    if anchor is None:
        return 0
    low, high = 0, len(rest)
    while low < high:  # whatever `code` has, it has every shorter start of too
        middle = (low + high + 1) // 2
        if anchor + rest[:middle] in code:
            low = middle
        else:
            high = middle - 1
    return low


def one_line(text: str, limit: int = 60) -> str:
    """`text` on one line (runs of whitespace as one space), cut to `limit` characters with `...`:
    how a finding quotes code."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
