"""Findings moved from the original text to the text as written (write mode)."""

from codemods.apply.engine import apply_edits
from codemods.io.positions import as_written
from codemods.source import Edit, Finding

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
