"""Figures per repository and per half, the baseline, and what changed against it.

A repository's figures for a target are plain counts (`counts`); a half's are the sums over its
repositories, with the share fixed as `--statistics` gives it (`codemods.io.formats.share_fixed`:
fixed / (fixed + manual), notes not counted). The baseline (baseline.json) keeps those counts per
repository and target, names and numbers only, and `diff` lists every count that moved, per
repository and per code, as ruff's ecosystem check compares two versions of ruff.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codemods.io import formats
from codemods.table import REASONS, TARGETS
from ecosystem_check.manifest import Entry
from ecosystem_check.measure import Measured
from ecosystem_check.snapshots import Snapshot

BASELINE = Path(__file__).with_name("baseline.json")
# The defects: each must be 0 on both halves (issue 40).
DEFECTS = ("crashes", "broken", "second_run", "unreported", "silent")
FIELDS = ("files", "migrated", "unparsable", *DEFECTS, "fixed", "manual", "notes", "manual_files")
KINDS = {"fix": "fixed", "manual": "manual", "note": "notes"}


@dataclass
class Repository:
    entry: Entry
    snapshot: Snapshot
    targets: dict[str, Measured] = field(default_factory=dict)


def counts(measured: Measured) -> dict[str, Any]:
    """The numbers the baseline keeps for one repository and target."""
    by_code: dict[str, Counter[str]] = {}
    for found in measured.findings:
        by_code.setdefault(found.code, Counter())[KINDS[found.kind]] += 1
    totals = sum(by_code.values(), Counter())
    return {
        "files": measured.files,
        "migrated": measured.migrated,
        "unparsable": len(measured.unparsable),
        **{name: len(getattr(measured, name)) for name in DEFECTS},
        "fixed": totals["fixed"],
        "manual": totals["manual"],
        "notes": totals["notes"],
        "manual_files": len({f.path for f in measured.findings if f.kind == "manual"}),
        "by_code": {
            code: {kind: by_code[code][kind] for kind in KINDS.values()} for code in sorted(by_code)
        },
    }


def summary(repositories: list[Repository], target: str) -> dict[str, Any]:
    """A selection's sums for one target, its share fixed and its manual findings by code and by
    reason (`--statistics`'s counts: codemods.io.formats.by_reason)."""
    present = [r for r in repositories if target in r.targets]
    each = [counts(r.targets[target]) for r in present]
    total = {name: sum(c[name] for c in each) for name in FIELDS}
    rows: dict[str, Counter[str]] = {}
    for c in each:
        for code, kinds in c["by_code"].items():
            rows.setdefault(code, Counter()).update(kinds)
    share = formats.share_fixed([{"code": code, **row} for code, row in rows.items()], target)
    manual: dict[str, list[str]] = {}
    reasons: list[str] = []
    for repository in present:
        for found in repository.targets[target].findings:
            if found.kind == "manual":
                reasons.append(found.reason)
                manual.setdefault(found.code, []).append(
                    f"{repository.entry.key}:{found.where}: {found.message}"
                )
    return {
        **total,
        "repositories": len({r.entry.name for r in present}),
        "share": share,
        "manual_by_code": dict(sorted(manual.items(), key=lambda item: (-len(item[1]), item[0]))),
        "manual_by_reason": {r: reasons.count(r) for r in REASONS if r in reasons},
    }


def table(repositories: list[Repository]) -> list[str]:
    """One line per target: the defects, the counts and the share fixed."""
    lines = [
        f"{'target':7} {'files':>5} {'crash':>5} {'broken':>6} {'rerun':>5} {'unrep':>5} "
        f"{'silent':>6} {'fixed':>6} {'manual':>6} {'notes':>5} {'share':>6} {'manual-files':>12}"
    ]
    for target in TARGETS:
        s = summary(repositories, target)
        share = formats.share_fixed_text(s["share"]).split(": ", 1)[1].split(" ", 1)[0]
        lines.append(
            f"{target:7} {s['files']:>5} {s['crashes']:>5} {s['broken']:>6} "
            f"{s['second_run']:>5} {s['unreported']:>5} {s['silent']:>6} {s['fixed']:>6} "
            f"{s['manual']:>6} {s['notes']:>5} {share:>6} {s['manual_files']:>12}"
        )
    return lines


def manual_groups(repositories: list[Repository], target: str, examples: int = 2) -> list[str]:
    """The manual findings of a selection by code, largest first, with a few examples each."""
    lines = []
    for code, places in summary(repositories, target)["manual_by_code"].items():
        lines.append(f"  {code}: {len(places)}")
        lines += [f"      {place}" for place in places[:examples]]
    return lines


def reason_groups(repositories: list[Repository], target: str) -> list[str]:
    """The manual findings of a selection by why they stay manual, in the table's order."""
    counts = summary(repositories, target)["manual_by_reason"]
    width = max((len(str(n)) for n in counts.values()), default=1)
    return [f"  {n:>{width}}  {reason}: {REASONS[reason]}" for reason, n in counts.items()]


def repository_line(repository: Repository, seen: set[str]) -> str:
    entry = repository.entry
    marks = [entry.half] + (["seen"] if entry.name in seen else [])
    parts = [f"{entry.key} [{', '.join(marks)}] files {len(repository.snapshot.files)}"]
    for target, measured in repository.targets.items():
        c = counts(measured)
        defects = sum(c[name] for name in DEFECTS)
        mark = f" !{defects}" if defects else ""
        parts.append(f"{target} {c['fixed']}/{c['manual']}/{c['notes']}{mark}")
    return "  ".join(parts)


def defect_lines(repositories: list[Repository]) -> list[str]:
    """Every crash, broken output, second-run change and name left silent, one line each."""
    lines = []
    for repository in repositories:
        for target, measured in repository.targets.items():
            for name in DEFECTS:
                for item in getattr(measured, name):
                    lines.append(f"{repository.entry.key} [{target}] {name}: {item}")
    return lines


def baseline(repositories: list[Repository]) -> dict[str, Any]:
    return {
        "about": (
            "bench/ecosystem.py --write-baseline: per manifest repository and target, the "
            "counts the ecosystem check measured (numbers and names only)"
        ),
        "entries": {
            r.entry.key: {target: counts(m) for target, m in r.targets.items()}
            for r in repositories
        },
    }


def write_baseline(repositories: list[Repository], path: Path = BASELINE) -> None:
    """One line per repository and target, so that a change reads as a one-line diff."""
    data = baseline(repositories)
    lines = ["{", f' "about": {json.dumps(data["about"])},', ' "entries": {']
    keys = sorted(data["entries"])
    for index, key in enumerate(keys):
        targets = data["entries"][key]
        lines.append(f"  {json.dumps(key)}: {{")
        for number, target in enumerate(sorted(targets)):
            comma = "," if number < len(targets) - 1 else ""
            counts = json.dumps(targets[target], sort_keys=True)
            lines.append(f"   {json.dumps(target)}: {counts}{comma}")
        lines.append("  }" + ("," if index < len(keys) - 1 else ""))
    lines += [" }", "}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_baseline(path: Path = BASELINE) -> dict[str, Any] | None:
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What moved from `old` to `new` (both as `baseline` writes them): per repository and
    target, each count and each code's fixed/manual/notes; then the totals per code."""
    before, after = old.get("entries", {}), new.get("entries", {})
    lines = []
    for key in sorted(set(before) | set(after)):
        if key not in before:
            lines.append(f"+ {key}: not in the baseline")
            continue
        if key not in after:
            lines.append(f"- {key}: in the baseline, not measured now")
            continue
        for target in sorted(set(before[key]) | set(after[key])):
            lines += _moved(f"{key} [{target}]", before[key].get(target), after[key].get(target))
    for target in TARGETS:
        total_before = _per_code(before, target, set(after))
        total_after = _per_code(after, target, set(before))
        for code, kind in sorted(set(total_before) | set(total_after)):
            a, b = total_before.get((code, kind), 0), total_after.get((code, kind), 0)
            if a != b:
                lines.append(f"total [{target}] {code} {kind}: {a} -> {b} ({b - a:+d})")
    return lines


def _moved(where: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    if old is None or new is None:
        return [f"{where}: {'not measured before' if old is None else 'not measured now'}"]
    lines = [
        f"{where} {name}: {old.get(name, 0)} -> {new.get(name, 0)} "
        f"({new.get(name, 0) - old.get(name, 0):+d})"
        for name in FIELDS
        if old.get(name, 0) != new.get(name, 0)
    ]
    codes = set(old.get("by_code", {})) | set(new.get("by_code", {}))
    for code in sorted(codes):
        a, b = old.get("by_code", {}).get(code, {}), new.get("by_code", {}).get(code, {})
        for kind in KINDS.values():
            if a.get(kind, 0) != b.get(kind, 0):
                lines.append(
                    f"{where} {code} {kind}: {a.get(kind, 0)} -> {b.get(kind, 0)} "
                    f"({b.get(kind, 0) - a.get(kind, 0):+d})"
                )
    return lines


def _per_code(entries: dict[str, Any], target: str, keys: set[str]) -> Counter[tuple[str, str]]:
    """Per (code, kind), the sum over the entries measured on both sides."""
    total: Counter[tuple[str, str]] = Counter()
    for key, targets in entries.items():
        if key in keys and target in targets:
            for code, kinds in targets[target].get("by_code", {}).items():
                for kind, number in kinds.items():
                    total[code, kind] += number
    return total


def as_json(repositories: list[Repository], extra: dict[str, Any]) -> dict[str, Any]:
    """Everything measured, for machines (`--json FILE`)."""
    return {
        **extra,
        "repositories": [
            {
                "key": r.entry.key,
                "name": r.entry.name,
                "commit": r.entry.commit,
                "half": r.entry.half,
                "seen": r.entry.seen,
                "copies": r.entry.copies,
                "problem": r.snapshot.problem,
                "issues": r.snapshot.issues,
                "targets": {
                    target: {
                        **counts(m),
                        **{name: getattr(m, name) for name in ("unparsable", *DEFECTS)},
                        "resolved": m.resolved,
                        "findings": [
                            {
                                "path": f.path,
                                "cell": f.cell,
                                "line": f.line,
                                "code": f.code,
                                "kind": f.kind,
                                "reason": f.reason or None,
                                "message": f.message,
                            }
                            for f in m.findings
                        ],
                    }
                    for target, m in r.targets.items()
                },
            }
            for r in repositories
        ],
    }
