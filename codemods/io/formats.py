"""How findings are printed: text, JSON, GitHub workflow commands, SARIF, `--statistics`.

Text as ruff and rustc print it: `path:line:col: CODE fact`, then `  help: fix`; `--statistics`
as `ruff check --statistics`, one line per rule, then the share of the work done for the target.

Every format carries the same three things apart: the fact at the line (`Finding.message`), the
fix (`Finding.help`) and where the rule is explained (`Rule.docs`, docs/rules.md); the reasoning
itself is printed once, by `--explain CODE`. Manual work carries why it stays manual too
(`Finding.reason`, one word of codemods/table/reasons.py): in json and SARIF per finding, and
counted by `--statistics`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from codemods import table
from codemods.source import Finding

# Marks after the code, as ruff's `[*]`: rewritten (or would be, with --check/--diff), or a note.
FIXABLE, NOTE = "[*]", "[note]"


def marker(finding: Finding) -> str:
    return NOTE if finding.note else FIXABLE if finding.fixed else ""


def kind(finding: Finding) -> str:
    return "note" if finding.note else "fix" if finding.fixed else "manual"


def text(path: str, finding: Finding) -> str:
    """`path:line:col: CODE [*] fact`, and `  help: fix` on the next line where there is one."""
    mark = marker(finding)
    head = f"{path}:{finding.line}:{finding.col}: {finding.code}{' ' + mark if mark else ''}"
    line = f"{head} {finding.message}"
    return f"{line}\n  help: {finding.help}" if finding.help else line


def as_dict(path: str, finding: Finding) -> dict[str, Any]:
    return {
        "path": path,
        "line": finding.line,
        "col": finding.col,
        "code": finding.code,
        "message": finding.message,
        "help": finding.help or None,
        "docs": table.RULES_BY_CODE[finding.code].docs,
        "fixable": finding.fixed and not finding.note,
        "kind": kind(finding),
        "reason": finding.reason or None,
    }


def github(path: str, finding: Finding) -> str:
    """A workflow command: the annotation's text is the fact, then the help on its own line."""
    level = "notice" if finding.fixed else "warning"  # notes too: nothing to do
    where = f"file={path},line={finding.line},col={finding.col},title={finding.code}"
    body = finding.message + (f"\nhelp: {finding.help}" if finding.help else "")
    return f"::{level} {where}::{github_escape(body)}"


def github_escape(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def statistics(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """Per rule code, in the table's order: how many findings, and how many of them are fixed,
    left for manual work, or notes."""
    counts: dict[str, Counter[str]] = {}
    for finding in findings:
        counts.setdefault(finding.code, Counter())[kind(finding)] += 1
    return [
        {
            "code": rule.code,
            "name": rule.name,
            "count": sum(counts[rule.code].values()),
            "fixed": counts[rule.code]["fix"],
            "manual": counts[rule.code]["manual"],
            "note": counts[rule.code]["note"],
        }
        for rule in table.RULES
        if rule.code in counts
    ]


def by_reason(findings: Iterable[Finding]) -> dict[table.Reason, int]:
    """How many findings left for manual work stay manual for each reason, in the table's order
    (codemods/table/reasons.py); reasons no finding gives are left out."""
    counts = Counter(f.reason for f in findings if not f.fixed)
    return {reason: counts[reason] for reason in table.REASONS if counts[reason]}


def by_reason_text(counts: dict[table.Reason, int]) -> list[str]:
    """`manual, by reason:` and one line per reason: its count, its word, its meaning; nothing
    where no work is manual."""
    if not counts:
        return []
    width = max(len(str(n)) for n in counts.values())
    word = max(len(reason) for reason in counts)
    return ["manual, by reason:"] + [
        f"  {n:>{width}}  {reason:{word}}  {table.REASONS[reason]}" for reason, n in counts.items()
    ]


def share_fixed(rows: list[dict[str, Any]], target: str) -> dict[str, Any]:
    """The share of the places found that the codemod fixes for `target`: fixed / (fixed +
    manual), notes not counted (they need no change); None where there is nothing to fix."""
    fixed = sum(row["fixed"] for row in rows)
    manual = sum(row["manual"] for row in rows)
    share = round(fixed / (fixed + manual), 4) if fixed + manual else None
    return {"target": target, "fixed": fixed, "manual": manual, "share_fixed": share}


def share_fixed_text(share: dict[str, Any]) -> str:
    """`share fixed (keras3): 57.9% (113 fixed, 82 manual; notes not counted)`."""
    counts = f"{share['fixed']} fixed, {share['manual']} manual; notes not counted"
    total = share["fixed"] + share["manual"]
    value = f"{share['fixed'] / total:.1%}" if total else "-"  # not the rounded share: once
    return f"share fixed ({share['target']}): {value} ({counts})"


def statistics_text(rows: list[dict[str, Any]]) -> list[str]:
    """`  75  LSO004  [*]  set-policy  (75 fixed)`: as ruff's, `[*]` where some are fixed."""
    width = max((len(str(row["count"])) for row in rows), default=1)
    lines = []
    for row in rows:
        mark = FIXABLE if row["fixed"] else NOTE if row["note"] == row["count"] else ""
        split = ", ".join(f"{row[k]} {k}" for k in ("fixed", "manual", "note") if row[k])
        lines.append(f"{row['count']:>{width}}  {row['code']}  {mark:6}  {row['name']}  ({split})")
    return lines


def _properties(finding: Finding) -> dict[str, str]:
    """A SARIF result's properties: the fix, and why the place stays manual, where there are."""
    given = {"help": finding.help, "reason": finding.reason}
    return {key: value for key, value in given.items() if value}


def sarif(
    findings: Iterable[tuple[str, Finding]], errors: Iterable[tuple[str, str]] = ()
) -> dict[str, Any]:
    """A SARIF 2.1.0 log: one rule per code from the table (its summary, its instruction as
    `help`, and where the catalogue explains it), one result per finding (the fact as its message,
    the fix in its properties).

    The catalogue's place is a path in this repository (`docs/rules.md#...`), so it goes in the
    rule's `properties.docs`: SARIF's `helpUri` must be an absolute URI, and the project publishes
    its docs at none.
    """
    rules = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "help": {"text": r.instruction},
            "properties": {"docs": r.docs},
        }
        for r in table.RULES
    ]
    results = [
        {
            "ruleId": f.code,
            "level": "note" if f.fixed else "warning",
            "message": {"text": f.message},
            **({"kind": "informational"} if f.note else {}),
            **({"properties": _properties(f)} if f.help or f.reason else {}),
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": Path(p).as_posix()},
                        "region": {"startLine": f.line, "startColumn": f.col},
                    }
                }
            ],
        }
        for p, f in findings
    ]
    notifications = [
        {"level": "error", "message": {"text": f"{path}: {error}"}} for path, error in errors
    ]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "compat-lso-migrate",
                        "informationUri": "https://pypi.org/project/compat-lso/",
                        "rules": rules,
                    }
                },
                "results": results,
                "invocations": [
                    {
                        "executionSuccessful": not notifications,
                        "toolExecutionNotifications": notifications,
                    }
                ],
            }
        ],
    }
