"""Files: discovery, the text prefilter, decoding, notebooks, and atomic writes.

A file's bytes are decoded with the encoding Python itself would use (PEP 263 cookie, BOM), without
newline translation, so writing the migrated text back with the same codec keeps the BOM, the line
endings and the trailing newline; a file with nothing to migrate is never written at all.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import tempfile
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from codemods import table
from codemods.context import Edit, Finding
from codemods.engine import MigrationError, Result, apply_edits, migrate

SKIPPED_DIRECTORIES = frozenset({
    ".git", ".hg", ".svn", ".nox", ".tox", ".venv", "venv", "env", ".env", "__pycache__", "build", "dist",
    "site-packages", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", ".ipynb_checkpoints",
})
SUFFIXES = (".py", ".pyi", ".ipynb")


def may_contain_targets(data: bytes, target: table.Target) -> bool:
    """The text prefilter: whether a file can contain anything to migrate (derived from the table).

    Plain substring tests (memchr-fast in CPython) rather than one regex with `.*?`, which would
    rescan the file for every occurrence of its first word.
    """
    if any(word.encode() in data for word in table.PREFILTER_ALONE[target]):
        return True
    return all(word.encode() in data for word in table.PREFILTER_ALL) and any(
        word.encode() in data for word in table.PREFILTER_ANY
    )


# -- discovery -------------------------------------------------------------------------------------


def discover(paths: list[str]) -> Iterator[Path]:
    """Files to process: explicit files as given, directories walked minus ignored things."""
    for given in paths:
        path = Path(given)
        if path.is_dir():
            yield from _walk(path, _Ignore.for_root(path))
        elif path.exists():
            yield path
        else:
            raise FileNotFoundError(f"path {given!r} does not exist: pass a file, a directory or '-' for stdin")


def _walk(directory: Path, ignore: _Ignore) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    ignore = ignore.descend(directory)
    for entry in entries:
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if entry.name in SKIPPED_DIRECTORIES or entry.name.endswith(".egg-info") \
                    or (path / "pyvenv.cfg").exists() or ignore.ignored(path, is_dir=True):
                continue
            yield from _walk(path, ignore)
        elif entry.is_file() and entry.name.endswith(SUFFIXES) and not ignore.ignored(path, is_dir=False):
            yield path


class _Ignore:
    """The .gitignore files that apply under a directory, each read with pathspec's full gitignore
    semantics (pathspec: the maintained implementation black and others use)."""

    def __init__(self, specs: list[tuple[Path, pathspec.GitIgnoreSpec]]) -> None:
        self.specs = specs  # (directory of the .gitignore, its patterns), outermost first

    @classmethod
    def for_root(cls, root: Path) -> _Ignore:
        specs: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
        # .gitignore files above the root still apply to it, up to the repository's top.
        parents = []
        for parent in root.resolve().parents:
            parents.append(parent)
            if (parent / ".git").exists():
                break
        else:
            parents = []
        resolved = root.resolve()
        for parent in reversed(parents):
            specs.extend(_read_gitignore(parent))
            # A directory passed explicitly is processed even where git would ignore it (a virtualenv's
            # site-packages, say): then only the .gitignore files inside it apply.
            below = [resolved, *resolved.parents[: len(resolved.parents) - len(parent.parents) - 1]]
            if any(cls(specs).ignored(path, is_dir=True) for path in below):
                return cls([])
        return cls(specs)

    def descend(self, directory: Path) -> _Ignore:
        extra = _read_gitignore(directory.resolve())
        return _Ignore(self.specs + extra) if extra else self

    def ignored(self, path: Path, *, is_dir: bool) -> bool:
        resolved = path.resolve()
        verdict = False
        # As git does: the deepest .gitignore with an opinion on the path decides.
        for base, spec in self.specs:
            try:
                relative = resolved.relative_to(base).as_posix()
            except ValueError:
                continue
            include = spec.check_file(relative + "/" if is_dir else relative).include
            if include is not None:
                verdict = include
        return verdict


def _read_gitignore(directory: Path) -> list[tuple[Path, pathspec.GitIgnoreSpec]]:
    try:
        lines = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return [(directory, pathspec.GitIgnoreSpec.from_lines(lines))]


# -- reading, migrating, writing ------------------------------------------------------------------


@dataclass
class Outcome:
    path: str
    original: str
    result: Result | None  # None: skipped by the prefilter
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.result is not None and self.result.text != self.original


def decode(data: bytes) -> tuple[str, str]:
    """The text and the codec to write it back with ('utf-8-sig' keeps a BOM)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding


def migrate_bytes(path: str, data: bytes, target: table.Target, enabled: frozenset[str] | None) -> Outcome:
    """Migrate one file's bytes; never raises for bad input (the error goes in the outcome)."""
    try:
        text, _ = decode(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        return Outcome(path, "", None, f"cannot decode: {error}")
    try:
        if path.endswith(".ipynb"):
            result = migrate_notebook(text, target, enabled)
        else:
            result = migrate(text, target, enabled)
    except MigrationError as error:
        return Outcome(path, text, None, str(error))
    return Outcome(path, text, result)


def process_file(path: str, target: table.Target, enabled: frozenset[str] | None, write: bool) -> Outcome:
    """Read, prefilter, migrate and (when asked) atomically write one file."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        return Outcome(path, "", None, f"cannot read: {error.strerror}")
    if not may_contain_targets(data, target):
        return Outcome(path, "", None)
    outcome = migrate_bytes(path, data, target, enabled)
    if write and outcome.changed and outcome.error is None:
        _, encoding = decode(data)
        try:
            atomic_write(Path(path), outcome.result.text.encode(encoding))
        except OSError as error:
            outcome.error = f"cannot write: {error.strerror}; file left unchanged"
    return outcome


def atomic_write(path: Path, data: bytes) -> None:
    """Write beside the file, then replace it in one step: readers see the old or the new file.

    A symlink is followed, so the file it points to is replaced and the link stays a link.
    """
    path = path.resolve()
    mode = stat.S_IMODE(path.stat().st_mode)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


# -- notebooks -------------------------------------------------------------------------------------

_MAGIC = re.compile(r"^(\s*)[%!]", re.MULTILINE)


def migrate_notebook(text: str, target: table.Target, enabled: frozenset[str] | None) -> Result:
    """Migrate a notebook's code cells as one module (an import in one cell serves the others).

    IPython magics (`%x`, `!x`) are masked as comments of the same length while migrating, so the
    edits' offsets hold for the real cell text too; `%%` cell magics are left out entirely. The
    JSON is rewritten only when a cell changed.
    """
    try:
        notebook = json.loads(text)
        code_cells = [c for c in notebook["cells"] if c.get("cell_type") == "code"]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise MigrationError(f"not a notebook: {error}") from None
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in code_cells]
    masked = ["" if s.lstrip().startswith("%%") else _MAGIC.sub(lambda m: m.group(1) + "#", s) for s in sources]
    # Each cell on its own lines: the separator newline is never inside an edited statement.
    starts, pieces, offset = [], [], 0
    for cell in masked:
        piece = cell if cell.endswith("\n") or not cell else cell + "\n"
        starts.append(offset)
        pieces.append(piece)
        offset += len(piece)
    joined = "".join(pieces)
    result = migrate(joined, target, enabled)
    findings = _cell_findings(result, pieces)
    if result.text == joined:
        return Result(text, findings)
    for index, (cell, source, start) in enumerate(zip(code_cells, sources, starts)):
        end = start + len(pieces[index])
        mine = [Edit(e.start - start, e.end - start, e.text) for e in result.edits if start <= e.start < end]
        if any(e.end > len(source) for e in mine):
            raise MigrationError("a rewrite crosses notebook cells; notebook left unchanged")
        if mine:
            new = apply_edits(source, mine)
            cell["source"] = new.splitlines(keepends=True) if isinstance(cell["source"], list) else new
    indent = 1 if text.startswith("{\n \"") else 2
    out = json.dumps(notebook, indent=indent, ensure_ascii=False) + ("\n" if text.endswith("\n") else "")
    return Result(out, findings)


def _cell_findings(result: Result, pieces: list[str]) -> list[Finding]:
    """Findings with lines counted within their cell, and the cell named in the message."""
    first_lines, line = [], 1
    for piece in pieces:
        first_lines.append(line)
        line += piece.count("\n")
    findings = []
    for finding in result.findings:
        index = max(i for i, first in enumerate(first_lines) if first <= finding.line)
        findings.append(Finding(finding.line - first_lines[index] + 1, finding.col, finding.code,
                                f"[cell {index + 1}] {finding.message}", finding.fixed))
    return findings
