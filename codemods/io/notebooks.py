"""Jupyter notebooks: their code cells migrated as one module, IPython syntax kept byte for byte.

The code cells are joined into one module (an import in one cell serves the others). IPython
syntax that is not Python is masked first, each line by text of the same length, so that the
edits' offsets hold for the real cell text too:

- a line magic, a shell command or a help request at the start of a logical line (`%cd x`,
  `!pip install x`, `files = !ls`, `obj?`), also inside a block (`if IN_COLAB:` then
  `    !pip install x`, the usual Colab pattern), becomes the statement `0` and a comment, so the
  block around it still has a statement; a magic continued with a trailing backslash masks its
  continuation lines as comments;
- a cell magic whose body is Python (`%%time`, `%%timeit`, `%%capture`, `%%prun`): its first line
  is masked and the body migrated; any other cell magic (`%%bash`, `%%writefile`, ...) holds no
  Python and is left out.

Only the edits are applied to the real cells, so every masked line comes back as it was. Cells
are numbered from 1, counting every cell of the notebook (markdown and raw cells included), as
they appear top to bottom; a finding's line is counted within its cell.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from dataclasses import replace
from typing import Any

from codemods import table
from codemods.apply.engine import migrate
from codemods.io import positions
from codemods.source import Edit, Finding, MigrationError, Result, apply_edits, parse

# Cell magics that run their body as Python code (IPython's own): migrated like any cell.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})

# `obj?`, `obj??`, `?obj`: IPython's help.
_HELP = re.compile(r"^(?:\?\??[\w.]*|[A-Za-z_][\w.]*\?\??)\s*$")
# `files = !ls`, `a, b = %sx cmd`: the output of a shell command or magic, assigned.
_ASSIGNED = re.compile(r"^[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[!%]")
# What a cell that does not parse must not contain for the notebook to be migrated without it:
# the prefilter's words (for any target), i.e. anything the codemod could have to change.
_ALONE_WORDS = frozenset(word for words in table.PREFILTER_ALONE.values() for word in words)


def migrate_notebook(
    text: str, target: table.Target, enabled: frozenset[str] | None, *, as_written: bool = False
) -> Result:
    """Migrate a notebook's code cells; the JSON is rewritten only when a cell changed.

    Findings carry the cell in their message (`[cell N]`) and the line within the cell: of the
    cell as written with `as_written`, else of the original cell.
    """
    try:
        notebook = json.loads(text)
        numbered = [
            (number, cell)
            for number, cell in enumerate(notebook["cells"], start=1)
            if cell.get("cell_type") == "code"
        ]
        sources = [_source(cell) for _, cell in numbered]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise MigrationError(f"not a notebook: {error}; notebook left unchanged") from None
    numbers = [number for number, _ in numbered]
    masked = [mask_ipython(source) for source in sources]
    broken = _leave_out_unparsable(masked)
    if any(_mentions_old_api(sources[index]) for index in broken):
        raise MigrationError(_broken_message(broken, numbers, "it uses the old API"))
    # Each cell on its own lines: the separator newline is never inside an edited statement.
    pieces = [m if not m or m.endswith("\n") else m + "\n" for m in masked]
    joined = "".join(pieces)
    try:
        result = migrate(joined, target, enabled)
    except MigrationError as error:
        raise MigrationError(f"{_where(joined, pieces, numbers)}{error}") from None
    if broken and (result.edits or result.findings):
        raise MigrationError(
            _broken_message(
                broken,
                numbers,
                "the other cells have code to migrate, and a cell left out could use the names "
                "they import",
            )
        )
    per_cell: list[list[Edit]] = []
    start = 0
    for piece in pieces:
        end = start + len(piece)
        per_cell.append(
            [
                Edit(e.start - start, e.end - start, e.text)
                for e in result.edits
                if start <= e.start < end
            ]
        )
        start = end
    findings = result.findings
    if as_written:
        findings = positions.as_written(findings, joined, result.edits, result.text)
        pieces = [apply_edits(p, edits) for p, edits in zip(pieces, per_cell, strict=True)]
    findings = _cell_findings(findings, pieces, numbers)
    if result.text == joined:
        return Result(text, findings)
    for (_, cell), source, edits in zip(numbered, sources, per_cell, strict=True):
        if not edits:
            continue
        if any(e.end > len(source) for e in edits):
            raise MigrationError("a rewrite crosses notebook cells; notebook left unchanged")
        new = apply_edits(source, edits)
        cell["source"] = new.splitlines(keepends=True) if isinstance(cell["source"], list) else new
    indent = 1 if text.startswith('{\n "') else 2
    out = json.dumps(notebook, indent=indent, ensure_ascii=False) + (
        "\n" if text.endswith("\n") else ""
    )
    return Result(out, findings)


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else str(source)


# -- masking IPython syntax ------------------------------------------------------------------------


def mask_ipython(source: str) -> str:
    """The cell's text with IPython syntax masked by Python of the same length ("" for a cell
    magic whose body is not Python)."""
    lines = source.splitlines(keepends=True)
    first = next((line for line in lines if line.strip()), "")
    if first.lstrip().startswith("%%"):
        name = first.lstrip()[2:].split(maxsplit=1)
        if not name or name[0] not in PYTHON_CELL_MAGICS:
            return ""
    masked: list[str] = []
    pending = ""  # the Python logical line read so far, when it is not complete yet
    continued = False  # the previous line was IPython syntax ending with a backslash
    # Whether a line starts a statement is asked only of lines that look like IPython: the
    # tokenizer runs up to the last of them (in most cells, none).
    last = max((i for i, line in enumerate(lines) if _is_ipython(line)), default=-1)
    for index, line in enumerate(lines):
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        if continued:
            masked.append(_as_comment(body) + ending)
        elif not pending and _is_ipython(body):
            masked.append(_as_statement(body) + ending)
        else:
            masked.append(line)
            if index < last:
                pending = "" if _complete(pending + line) else pending + line
            continue
        continued = body.endswith("\\")
    return "".join(masked)


def _is_ipython(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and (
        stripped[0] in "%!" or bool(_HELP.match(stripped)) or bool(_ASSIGNED.match(stripped))
    )


def _as_statement(line: str) -> str:
    """`    !pip install x` -> `    0#ip install x`: a statement, so a block keeps its body."""
    rest = line.lstrip()
    indent = line[: len(line) - len(rest)]
    return indent + "0" + ("#" + rest[2:] if len(rest) > 1 else "")


def _as_comment(line: str) -> str:
    rest = line.lstrip()
    return line if not rest else line[: len(line) - len(rest)] + "#" + rest[1:]


def _complete(text: str) -> bool:
    """Whether `text` ends outside any bracket, string or backslash continuation."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text).readline):
            pass
    except tokenize.TokenError:
        return False  # EOF in a multi-line statement or string
    except (SyntaxError, ValueError):
        return True  # not for the masking to judge: the parse reports it
    return True


# -- cells that are not Python ---------------------------------------------------------------------


def _leave_out_unparsable(masked: list[str]) -> dict[int, SyntaxError | ValueError]:
    """Blank the cells that do not parse even masked (automagic `pip install x`, an unknown
    syntax); returns them by index, with their error."""
    broken: dict[int, SyntaxError | ValueError] = {}
    for index, cell in enumerate(masked):
        if not cell:
            continue
        try:
            parse(cell)
        except (SyntaxError, ValueError) as error:
            broken[index] = error
            masked[index] = ""
    return broken


def _mentions_old_api(source: str) -> bool:
    return any(word in source for word in _ALONE_WORDS) or (
        all(word in source for word in table.PREFILTER_ALL)
        and any(word in source for word in table.PREFILTER_ANY)
    )


def _broken_message(
    broken: dict[int, SyntaxError | ValueError], numbers: list[int], why: str
) -> str:
    described = "; ".join(
        f"cell {numbers[index]}"
        + (
            f", line {error.lineno}: {error.msg}"
            if isinstance(error, SyntaxError) and error.lineno
            else f": {error}"
        )
        for index, error in broken.items()
    )
    return (
        f"does not parse as Python, even with IPython's syntax masked ({described}; cells count "
        f"from 1, markdown cells included), and {why}: fix the cell (a shell command needs `!`, "
        "a cell of another language a `%%` cell magic) and run again; notebook left unchanged"
    )


def _where(joined: str, pieces: list[str], numbers: list[int]) -> str:
    """`cell N: ` for the cell where the joined module fails to parse, if it does."""
    try:
        parse(joined)
    except (SyntaxError, ValueError) as error:
        if isinstance(error, SyntaxError) and error.lineno:
            index, line = _cell_of_line(error.lineno, pieces)
            return f"cell {numbers[index]} (from 1), line {line}: "
    return ""


# -- findings --------------------------------------------------------------------------------------


def _cell_of_line(line: int, pieces: list[str]) -> tuple[int, int]:
    """The index of the cell holding `line` of the joined text, and the line within the cell."""
    first = 1
    found = (0, line)
    for index, piece in enumerate(pieces):
        count = piece.count("\n")
        if count and first <= line < first + count:
            return index, line - first + 1
        if count and line >= first:
            found = (index, line - first + 1)
        first += count
    return found


def _cell_findings(findings: list[Finding], pieces: list[str], numbers: list[int]) -> list[Finding]:
    """Findings with lines counted within their cell, and the cell named in the message; the
    lines their words name (`used at line 9`) are counted the same way."""
    cell_findings = []
    for finding in findings:
        index, line = _cell_of_line(finding.line, pieces)
        message = _cell_lines(finding.message, pieces, numbers, index)
        cell_findings.append(
            replace(
                finding,
                line=line,
                message=f"[cell {numbers[index]}] {message}",
                help=_cell_lines(finding.help, pieces, numbers, index),
            )
        )
    return cell_findings


# `line 9`, `lines 25, 26` in a finding's words: lines of the joined cells.
_LINE_NUMBERS = re.compile(r"\b(lines?) (\d+(?:, \d+)*)")


def _cell_lines(text: str, pieces: list[str], numbers: list[int], index: int) -> str:
    """`text` with each line number it names counted within its cell, and that cell named where
    it is not the finding's own (`lines 1, 2 of cell 17; 4 of cell 20`)."""

    def replaced(match: re.Match[str]) -> str:
        groups: dict[int, list[str]] = {}
        for number in match.group(2).split(", "):
            where, line = _cell_of_line(int(number), pieces)
            groups.setdefault(where, []).append(str(line))
        listed = "; ".join(
            ", ".join(lines) + ("" if where == index else f" of cell {numbers[where]}")
            for where, lines in groups.items()
        )
        return f"{match.group(1)} {listed}"

    return _LINE_NUMBERS.sub(replaced, text)
