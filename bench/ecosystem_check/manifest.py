"""The manifest of real repositories (manifest.toml) and the halves it splits into.

Each `[[repo]]` table is one repository at one pinned commit (a repository can appear at several
commits). Only facts are kept: what the fields mean is said in the file's header.

The halves: a repository falls in the tuning half or the check half by the low bit of the sha256 of
its name, or, for a repository that copies another one (`copies = "owner/name"`: a fork or a
vendored copy), of the name it copies, so that copies of one code base never straddle the halves.
Rules are developed looking at the tuning half only; shares are claimed on the check half.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Half = Literal["tuning", "check"]
HALVES: tuple[Half, ...] = ("tuning", "check")
GENERATIONS = ("experimental", "tf24", "both")
MANIFEST = Path(__file__).with_name("manifest.toml")

_NAME = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_SHA = re.compile(r"[0-9a-f]{40}")


class ManifestError(ValueError):
    """The manifest does not say what the check needs; the message names the entry and field."""


@dataclass(frozen=True)
class Entry:
    name: str  # owner/name on GitHub
    commit: str  # 40 hex digits
    files: tuple[tuple[str, str], ...]  # (path in the repository, git blob id at the commit)
    licence: str  # SPDX id of the repository's licence, or "unknown"
    forms: tuple[str, ...]  # short tags for the shapes its files show
    generation: str  # "experimental" (TF 2.1-2.3 API), "tf24" (TF 2.4-2.15 class) or "both"
    seen: bool = False  # rules were tuned on it in earlier rounds
    copies: str | None = None  # the repository it forks or vendors, if any

    @property
    def key(self) -> str:
        """The entry's name in reports and the baseline: `owner/name@commit[:10]`."""
        return f"{self.name}@{self.commit[:10]}"

    @property
    def group(self) -> str:
        """What decides the half: the repository it copies, or its own name."""
        return self.copies or self.name

    @property
    def half(self) -> Half:
        return half_of(self.group)


def half_of(name: str) -> Half:
    """The stable half of a repository name: the low bit of sha256("owner/name")."""
    return HALVES[hashlib.sha256(name.encode("utf-8")).digest()[-1] & 1]


def load(path: Path = MANIFEST) -> list[Entry]:
    """The manifest's entries, checked; raises ManifestError naming the entry and field at fault."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ManifestError(f"{path}: cannot read the manifest: {error}") from None
    tables = data.get("repo")
    if not isinstance(tables, list) or not tables:
        raise ManifestError(f"{path}: no [[repo]] tables; each repository is one [[repo]] table")
    entries = [_entry(path, index, table) for index, table in enumerate(tables, start=1)]
    keys = [e.key for e in entries]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ManifestError(f"{path}: the same repository and commit twice: {', '.join(twice)}")
    return entries


def _entry(path: Path, index: int, table: Any) -> Entry:
    where = f"{path}: [[repo]] number {index}"
    if not isinstance(table, dict):
        raise ManifestError(f"{where}: not a table")
    name = _field(table, "name", str, where)
    where = f"{path}: [[repo]] {name!r}"
    if not _NAME.fullmatch(name):
        raise ManifestError(f"{where}: name must be 'owner/name', got {name!r}")
    commit = _field(table, "commit", str, where)
    if not _SHA.fullmatch(commit):
        raise ManifestError(f"{where}: commit must be 40 lowercase hex digits, got {commit!r}")
    files = _field(table, "files", list, where)
    if not files:
        raise ManifestError(f"{where}: files is empty; name at least one path")
    pairs = []
    for item in files:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("path"), str)
            and isinstance(item.get("blob"), str)
            and _SHA.fullmatch(item["blob"])
        ):
            raise ManifestError(
                f'{where}: each of files is {{ path = "...", blob = "<40 hex>" }}, got {item!r}'
            )
        if item["path"].startswith("/") or ".." in item["path"].split("/"):
            raise ManifestError(f"{where}: path {item['path']!r} must be relative, inside the repo")
        pairs.append((item["path"], item["blob"]))
    generation = _field(table, "generation", str, where)
    if generation not in GENERATIONS:
        raise ManifestError(f"{where}: generation must be one of {GENERATIONS}, got {generation!r}")
    copies = table.get("copies")
    if copies is not None and not (isinstance(copies, str) and _NAME.fullmatch(copies)):
        raise ManifestError(f"{where}: copies must be 'owner/name', got {copies!r}")
    forms = _field(table, "forms", list, where)
    if not all(isinstance(form, str) for form in forms):
        raise ManifestError(f"{where}: forms must be a list of strings")
    seen = table.get("seen", False)
    if not isinstance(seen, bool):
        raise ManifestError(f"{where}: seen must be true or false, got {seen!r}")
    return Entry(
        name=name,
        commit=commit,
        files=tuple(pairs),
        licence=_field(table, "licence", str, where),
        forms=tuple(forms),
        generation=generation,
        seen=seen,
        copies=copies,
    )


def _field(table: dict[str, Any], field: str, kind: type, where: str) -> Any:
    if field not in table:
        raise ManifestError(f"{where}: missing field {field!r}")
    value = table[field]
    if not isinstance(value, kind):
        raise ManifestError(f"{where}: {field} must be a {kind.__name__}, got {value!r}")
    return value


def seen_repositories(entries: list[Entry]) -> set[str]:
    """Names whose files rules were tuned on: the `seen` ones, and any copy of one."""
    seen = {e.name for e in entries if e.seen}
    return seen | {e.name for e in entries if e.copies in seen}


def selections(entries: list[Entry]) -> dict[str, list[Entry]]:
    """The sets every figure is given for: each half, and the check half without seen code."""
    seen = seen_repositories(entries)
    return {
        "tuning": [e for e in entries if e.half == "tuning"],
        "check": [e for e in entries if e.half == "check"],
        "check-unseen": [e for e in entries if e.half == "check" and e.name not in seen],
    }
