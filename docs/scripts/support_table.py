"""Render the support matrix in docs/support.md from the test runs' records in .matrix/.

`nox -s tests` (the anchors) and `nox -s matrix` (every other release line) each write
.matrix/<cell>.json; this script puts them into the table between the `support-table` markers
of docs/support.md, one row per cell that noxfile.py defines, in its order. A cell with no
record is shown as not run. Needs no TensorFlow:

    python docs/scripts/support_table.py    # or: nox -s support_table
"""

from __future__ import annotations

import ast
import json
import pathlib
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOXFILE = ROOT / "noxfile.py"
RESULTS = ROOT / ".matrix"
DOC = ROOT / "docs" / "support.md"
START = "<!-- support-table: start (docs/scripts/support_table.py writes this) -->"
END = "<!-- support-table: end -->"


def cells() -> list[tuple[str, str]]:
    """(cell, tier) for each cell noxfile.py defines: BACKENDS run whole, MATRIX compact."""
    tree = ast.parse(NOXFILE.read_text())
    found: dict[str, list[str]] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in ("BACKENDS", "MATRIX")
        ):
            found[node.targets[0].id] = [
                key.value
                for key in node.value.keys
                if isinstance(key, ast.Constant) and isinstance(key.value, str)
            ]
    return [(cell, "whole suite") for cell in found["BACKENDS"]] + [
        (cell, "compact set") for cell in found["MATRIX"]
    ]


def _row(cell: str, tier: str, record: dict[str, Any]) -> str:
    session = "tests" if tier == "whole suite" else "matrix"
    name = f"`{session}({cell})`"
    versions = record["versions"]
    tensorflow = versions["tensorflow"]
    if versions.get("tf_keras"):
        tensorflow += f" + tf-keras {versions['tf_keras']}"
    if not versions["python"].startswith("3.11."):  # the cells of CELL_PYTHON in noxfile.py
        tensorflow += f" on Python {versions['python']}"
    package, _, version = versions["tf.keras"].partition(" ")
    keras = f"`{package}` {version}"
    counts = record["tests"]
    tier = {
        "full": "whole suite",
        "compact": "compact set",
        "compact, no scripts": "compact set, no old scripts",
        "full, backend-free tests on tf221": "whole suite but the backend-free tests",
        "full, verify end to end in verify_e2e": "whole suite but verify's end-to-end files",
        "full, codemod-only tests on tf221": "whole suite but the codemod-only tests",
    }.get(record["tier"], record["tier"])
    if record.get("own_process"):
        tier += f" ({', '.join(record['own_process'])} in a process of its own)"
    elif record.get("one_process_per_file"):  # records written before 2026-11-25
        tier += " (one process per file)"
    failed = counts["failed"] + counts["errors"]
    result = "passed" if record["exit"] == "passed" else f"**{failed} failed**"
    return (
        f"| {name} | {tensorflow} | {keras} | {tier} | {result} | {counts['passed']} "
        f"| {counts['skipped']} | {counts['xfailed']} | {record['date']} |"
    )


def _earlier_rows(text: str) -> dict[str, str]:
    """The rows the page shows now, by nox session: a cell with no record keeps its last row.

    `nox -s matrix` runs before a release and CI runs only its edges, so the table shows each
    cell's last run with its date, not only this machine's records.
    """
    rows = {}
    for line in text.partition(START)[2].partition(END)[0].splitlines():
        columns = [column.strip() for column in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(columns) == len(HEADER):
            rows[columns[0]] = line
    return rows


HEADER = [
    "nox session",
    "TensorFlow",
    "`tf.keras` is",
    "tests",
    "result",
    "passed",
    "skipped",
    "xfailed",
    "run on",
]


def render(text: str = "") -> str:
    earlier = _earlier_rows(text)
    rows = []
    for cell, tier in cells():
        path = RESULTS / f"{cell}.json"
        session = f"`{'tests' if tier == 'whole suite' else 'matrix'}({cell})`"
        if path.exists():
            rows.append(_row(cell, tier, json.loads(path.read_text())))
        elif session in earlier:
            rows.append(earlier[session])
        else:
            rows.append(f"| {session} | | | {tier} | not run | | | | |")
    header = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    footer = [
        "",
        "Python 3.11 on Linux x86_64 where a row names no other. Each row is its cell's last "
        "run (`run on`); regenerate with "
        "`nox -s support_table` after `nox -s tests matrix` (or CI's `nox -t ci`).",
    ]
    return "\n".join([START, *header, *rows, *footer, END])


def main() -> int:
    text = DOC.read_text()
    before, _, rest = text.partition(START)
    _, found, after = rest.partition(END)
    if not found:
        print(f"{DOC}: the support-table markers are missing", file=sys.stderr)
        return 2
    DOC.write_text(before + render(text) + after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
