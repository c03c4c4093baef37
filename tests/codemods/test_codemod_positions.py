"""Findings moved from the original text to the text as written (write mode)."""

import pytest

from codemods.apply.engine import apply_edits
from codemods.io.positions import as_written
from codemods.source import Edit, Finding, Source

ORIGINAL = "import a\ndef f():\n    import old\n    x = old.thing(1)  # here\n"


def _finding(line: int, col: int) -> Finding:
    return Finding(line, col, "LSO012", "m", fixed=False)


def test_an_insertion_above_moves_findings_down_and_a_shorter_name_moves_them_left():
    start = ORIGINAL.index("old.thing")
    edits = [Edit(0, 0, "import compat_lso\n"), Edit(start, start + len("old.thing"), "t")]
    written = apply_edits(ORIGINAL, edits)
    here = ORIGINAL.splitlines()[3].index("#") + 1
    moved = as_written([_finding(4, here)], ORIGINAL, edits, written)
    assert (moved[0].line, moved[0].col) == (5, here - len("old.thing") + 1)
    assert written.splitlines()[4][moved[0].col - 1 :] == "# here"


def test_a_finding_inside_a_removed_span_points_where_the_span_was():
    # The indented import's whole line is deleted: its finding (at column 5) goes to the start of
    # the line that took its place.
    line_start = ORIGINAL.index("    import old")
    edits = [Edit(line_start, ORIGINAL.index("    x ="), "")]
    written = apply_edits(ORIGINAL, edits)
    moved = as_written([_finding(3, 5)], ORIGINAL, edits, written)
    assert (moved[0].line, moved[0].col) == (3, 1)
    assert written.splitlines()[2] == "    x = old.thing(1)  # here"


def test_no_edits_no_change():
    findings = [_finding(2, 1)]
    assert as_written(findings, ORIGINAL, [], ORIGINAL) == findings


def _line_starts(text: str) -> list[int]:
    """Offset 0 and the offset after every \r\n, lone \r and \n, one character at a time."""
    starts, index = [0], 0
    while index < len(text):
        index += 2 if text.startswith("\r\n", index) else 1
        if text[index - 1] in "\r\n":
            starts.append(index)
    return starts


@pytest.mark.parametrize(
    "text",
    [
        "",
        "x",
        "x\n",
        "a\nb",
        "a\nb\n\n",
        "a\r\nb\r\n",
        "a\rb",
        "a\r\nb\nc\rd",
        "é\nü",
        "f\x0cg\u2028h\n",
    ],
)
def test_line_starts_are_where_each_line_begins(text):
    """Python's line breaks are \r\n, \r and \n (not a form feed or U+2028)."""
    assert Source(text).line_starts == _line_starts(text)
