"""Files: discovery, decoding, atomic writes (prefilter: prefilter.py; notebooks: notebooks.py).

A file's bytes are decoded with the encoding Python itself would use (PEP 263 cookie, BOM), without
newline translation, so writing the migrated text back with the same codec keeps the BOM, the line
endings and the trailing newline; a file with nothing to migrate is never written at all.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tempfile
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from codemods import table
from codemods.apply.engine import migrate
from codemods.io import positions
from codemods.io.notebooks import migrate_notebook
from codemods.io.prefilter import may_contain_targets
from codemods.source import MigrationError, Result

SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".nox",
        ".tox",
        ".venv",
        "venv",
        "env",
        ".env",
        "__pycache__",
        "build",
        "dist",
        "site-packages",
        "node_modules",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        ".ipynb_checkpoints",
    }
)
SUFFIXES = (".py", ".pyi", ".ipynb")


# -- discovery -------------------------------------------------------------------------------------


def discover(paths: list[str]) -> Iterator[Path]:
    """Files to process: explicit files as given, directories walked minus ignored things.

    A file reached twice (given twice, or through a symlink and under its own name) is yielded
    once, so it is never migrated by two workers at the same time. A dangling symlink is yielded
    too, so that processing it reports it.
    """
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = _walk(path, _Ignore.for_root(path))
        elif path.exists() or path.is_symlink():
            found = iter([path])
        else:
            raise FileNotFoundError(
                f"path {given!r} does not exist: pass a file, a directory or '-' for stdin"
            )
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                yield file


def _walk(directory: Path, ignore: _Ignore) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    ignore = ignore.descend(directory)
    for entry in entries:
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if (
                entry.name in SKIPPED_DIRECTORIES
                or entry.name.endswith(".egg-info")
                or (path / "pyvenv.cfg").exists()
                or ignore.ignored(path, is_dir=True)
            ):
                continue
            yield from _walk(path, ignore)
        elif (
            entry.name.endswith(SUFFIXES)
            and (entry.is_file() or entry.is_symlink())
            and not entry.name.startswith(TEMPORARY_PREFIX)
            and not ignore.ignored(path, is_dir=False)
        ):
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
            # A directory passed explicitly is processed even where git would ignore it (a
            # virtualenv's site-packages, say): then only the .gitignore files inside it apply.
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
        lines = (
            (directory / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
        )
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
    encoding: str = "utf-8"  # the file's codec ('utf-8-sig' when it has a BOM)

    @property
    def text(self) -> str:
        """The file's text after the rewrite (its original text where nothing was rewritten)."""
        return self.result.text if self.result is not None else self.original

    @property
    def changed(self) -> bool:
        return self.text != self.original


def decode(data: bytes) -> tuple[str, str]:
    """The text and the codec to write it back with ('utf-8-sig' keeps a BOM).

    Raises DecodeError, whose message says where the problem is and what to do about it.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        # A bad cookie, a BOM that contradicts it, or non-UTF-8 bytes on line 1 or 2.
        if "unknown encoding" in str(error) or "encoding problem" in str(error):
            raise DecodeError(
                f"cannot decode: {error}: the coding cookie names an encoding Python does not "
                "know, or contradicts the file's UTF-8 BOM; fix the `# -*- coding: ... -*-` line; "
                "file left unchanged"
            ) from None
        # Undeclared: then it must be UTF-8, and the decode below says where it is not.
        encoding = "utf-8"
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        where = f"byte 0x{data[error.start]:02x} on line {line}"
        if encoding in ("utf-8", "utf-8-sig"):
            message = (
                f"{where} is not UTF-8 and no coding cookie declares another encoding; declare the "
                f"file's "
                "encoding on its first or second line (`# -*- coding: latin-1 -*-`) or convert it "
                "to UTF-8"
            )
        else:
            message = (
                f"{where} is not valid {encoding}, the encoding its coding cookie declares; "
                "fix the cookie"
            )
        raise DecodeError(f"cannot decode: {message}; file left unchanged") from None
    except LookupError as error:
        raise DecodeError(
            f"cannot decode: {error}; fix the coding cookie; file left unchanged"
        ) from None


class DecodeError(ValueError):
    """A file's bytes cannot be decoded as Python source; the message says why and what to do."""


def migrate_bytes(
    path: str,
    data: bytes,
    target: table.Target,
    enabled: frozenset[str] | None,
    *,
    as_written: bool = False,
) -> Outcome:
    """Migrate one file's bytes; never raises for bad input (the error goes in the outcome).

    Findings point into the original text, or with `as_written` (write mode) into the text that
    is written.
    """
    try:
        text, encoding = decode(data)
    except DecodeError as error:
        return Outcome(path, "", None, str(error))
    try:
        if path.endswith(".ipynb"):
            result = migrate_notebook(text, target, enabled, as_written=as_written)
        else:
            result = migrate(text, target, enabled)
            if as_written:
                result.findings = positions.as_written(
                    result.findings, text, result.edits, result.text
                )
    except MigrationError as error:
        return Outcome(path, text, None, str(error), encoding)
    return Outcome(path, text, result, encoding=encoding)


def process_file(
    path: str, target: table.Target, enabled: frozenset[str] | None, write: bool
) -> Outcome:
    """Read, prefilter, migrate and (when asked) atomically write one file. Never raises: whatever
    goes wrong is the outcome's error, and the rest of the run goes on."""
    try:
        return _process_file(path, target, enabled, write)
    except Exception as error:
        return Outcome(
            path,
            "",
            None,
            f"internal error ({type(error).__name__}: {error}); file left unchanged; "
            "please report this with the file",
        )


def _process_file(
    path: str, target: table.Target, enabled: frozenset[str] | None, write: bool
) -> Outcome:
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as error:
        if file.is_symlink() and not file.exists():
            return Outcome(
                path,
                "",
                None,
                f"dangling symlink: it points to {os.readlink(file)!r}, which does not "
                "exist; restore the target or remove the link",
            )
        if isinstance(error, PermissionError):
            return Outcome(
                path,
                "",
                None,
                f"cannot read: {error.strerror}; make it readable (chmod u+r) and run again",
            )
        return Outcome(path, "", None, f"cannot read: {error.strerror}")
    if not may_contain_targets(data, target):
        return Outcome(path, "", None)
    outcome = migrate_bytes(path, data, target, enabled, as_written=write)
    if write and outcome.changed and outcome.error is None:
        encoding = outcome.encoding
        if read_only(file):
            outcome.error = (
                "read-only, not rewritten; make it writable (chmod u+w) and run again, or see the "
                "change with --diff; file left unchanged"
            )
            return outcome
        try:
            atomic_write(file, outcome.text.encode(encoding))
        except OSError as error:
            where = f" {error.filename}" if error.filename else ""
            outcome.error = (
                f"cannot write{where}: {error.strerror}; the rewrite goes to a temporary file in "
                f"the "
                "same directory, so the directory must be writable too; file left unchanged"
            )
    return outcome


def read_only(path: Path) -> bool:
    """Whether the user marked the file read-only (no write bit at all, or none for us).

    The atomic write replaces the directory entry, which would succeed on a read-only file: checked
    here so that a read-only file is respected, as an editor would, even when running as root.
    """
    mode = path.stat().st_mode
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK)


# Temporary files of the atomic write start with this, so a run killed between writing one and
# moving it into place leaves a file that is clearly named, and that discovery skips.
TEMPORARY_PREFIX = ".compat-lso-tmp."


def atomic_write(path: Path, data: bytes) -> None:
    """Write beside the file, then replace it in one step: readers see the old or the new file.

    A symlink is followed, so the file it points to is replaced and the link stays a link. Only a
    SIGKILL between the creation of the temporary file and the replace can leave it behind: it is
    named `.compat-lso-tmp.<name>.<random>.tmp` (hidden, and not a .py file, so no later run
    reads it).
    """
    path = path.resolve()
    mode = stat.S_IMODE(path.stat().st_mode)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f"{TEMPORARY_PREFIX}{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
