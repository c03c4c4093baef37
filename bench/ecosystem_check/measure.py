"""The codemod on one repository's files for one target, through the project's own API.

As tests/codemods/test_codemod_corpus.py does: `codemods.cli.run` writes the migration into a copy,
then each output is parsed (Python files, and notebooks' code cells with IPython masked), run again
(nothing may change), and asked two questions about what the target lacks: the codemod's own
(`codemods.guarantee.unreported`) and the installed TensorFlow's (`resolve`).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from codemods import guarantee
from codemods.cli import run
from codemods.io import formats
from codemods.io.files import Outcome, decode
from codemods.io.notebooks import mask_ipython
from codemods.table import Target
from ecosystem_check.resolve import Resolver, references

_CELL = re.compile(r"\[cell (\d+)\]")


@dataclass(frozen=True)
class Found:
    """One finding, where it points in the written file (`cell` for a notebook)."""

    path: str
    cell: int | None
    line: int
    code: str
    kind: str  # "fix", "manual" or "note" (codemods.io.formats.kind)
    message: str
    reason: str = ""  # why a manual one stays manual (codemods/table/reasons.py)

    @property
    def where(self) -> str:
        return f"{self.path}:{'' if self.cell is None else f'cell {self.cell}:'}{self.line}"


@dataclass
class Measured:
    """What one target's migration of one repository's files gave."""

    target: str
    files: int = 0  # files given
    migrated: int = 0  # files that passed the prefilter and came back without an error
    crashes: list[str] = field(default_factory=list)  # an exception, or an error on valid input
    unparsable: list[str] = field(default_factory=list)  # inputs that are not valid Python
    broken: list[str] = field(default_factory=list)  # outputs (or cells) that no longer parse
    second_run: list[str] = field(default_factory=list)  # files a second run still changes
    unreported: list[str] = field(default_factory=list)  # the sweep's flags with no finding
    silent: list[str] = field(default_factory=list)  # names TensorFlow lacks, with no finding
    resolved: bool = False  # whether `silent` was asked of the installed TensorFlow
    findings: list[Found] = field(default_factory=list)


def sources(path: str, text: str) -> list[tuple[int | None, str]]:
    """The Python in a file: itself, or each code cell (numbered among all cells, from 1) with
    IPython masked, ending with a newline. Raises ValueError for a notebook that is not JSON."""
    if not path.endswith(".ipynb"):
        return [(None, text)]
    cells = json.loads(text)["cells"]
    found: list[tuple[int | None, str]] = []
    for number, cell in enumerate(cells, start=1):
        if cell.get("cell_type") == "code":
            source = cell["source"]
            masked = mask_ipython("".join(source) if isinstance(source, list) else str(source))
            found.append((number, masked if not masked or masked.endswith("\n") else masked + "\n"))
    return found


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _joined(cells: list[tuple[int | None, str]]) -> tuple[str, list[tuple[int, int | None]]]:
    """The cells as one module (as the codemod joins them) and, per cell, (first line, number)."""
    starts, line = [], 1
    for number, source in cells:
        starts.append((line, number))
        line += source.count("\n")
    return "".join(source for _, source in cells), starts


def _where(starts: list[tuple[int, int | None]], line: int) -> tuple[int | None, int]:
    """A joined module's line as (cell, line within the cell)."""
    first, number = max((s for s in starts if s[0] <= line), key=lambda s: s[0])
    return number, line - first + 1


def measure(root: Path, files: list[str], target: Target, resolver: Resolver | None) -> Measured:
    """Migrate a copy of `root`'s `files` (paths relative to it) for `target` and check the
    outputs; `root` itself is left as it is."""
    measured = Measured(target, files=len(files))
    measured.resolved = resolver is not None and target in resolver.targets()
    with tempfile.TemporaryDirectory(prefix=f"ecosystem-{target}-") as scratch:
        work = Path(scratch) / "repo"
        shutil.copytree(root, work)
        for relative in files:
            _one(work, relative, target, resolver if measured.resolved else None, measured)
    return measured


def _one(
    work: Path, relative: str, target: Target, resolver: Resolver | None, measured: Measured
) -> None:
    path = work / relative
    try:
        [outcome] = run([str(path)], target, enabled=None, write=True, jobs=1)
    except Exception as error:  # run() catches per file; anything that escapes is a crash
        measured.crashes.append(f"{relative}: {type(error).__name__}: {error}")
        return
    if outcome.error:
        valid = _valid_input(relative, path, outcome)
        (measured.crashes if valid else measured.unparsable).append(f"{relative}: {outcome.error}")
        return
    if outcome.result is None:
        return  # the prefilter found nothing to migrate for this target
    measured.migrated += 1
    for finding in outcome.result.findings:
        cell = _CELL.search(finding.message) if relative.endswith(".ipynb") else None
        measured.findings.append(
            Found(
                relative,
                int(cell.group(1)) if cell else None,
                finding.line,
                finding.code,
                formats.kind(finding),
                finding.message,
                finding.reason,
            )
        )
    written = decode(path.read_bytes())[0]
    before, after = sources(relative, outcome.original), _sources_or_none(relative, written)
    if after is None:
        measured.broken.append(f"{relative}: the written notebook is not JSON")
        return
    valid_before = {number for number, source in before if _parses(source)}
    for number, source in after:
        if number in valid_before and not _parses(source):
            measured.broken.append(relative if number is None else f"{relative}: cell {number}")
    [again] = run([str(path)], target, enabled=None, write=False, jobs=1)
    if again.error or again.changed:
        measured.second_run.append(f"{relative}: {again.error or 'changed again'}")
    _guarantee(relative, before, target, measured)
    if resolver is not None and not measured.broken:
        _silent(
            relative,
            written=written,
            after=after,
            target=target,
            resolver=resolver,
            measured=measured,
        )


def _valid_input(relative: str, path: Path, outcome: Outcome) -> bool:
    """Whether the file the codemod gave up on was valid input (decodable, Python or a
    notebook whose code cells parse): an error on valid input is the codemod's."""
    if "internal error" in (outcome.error or ""):
        return True
    try:
        text = outcome.original or decode(path.read_bytes())[0]
        return all(_parses(source) for _, source in sources(relative, text))
    except (ValueError, KeyError, TypeError):
        return False


def _sources_or_none(relative: str, text: str) -> list[tuple[int | None, str]] | None:
    try:
        return sources(relative, text)
    except (ValueError, KeyError, TypeError):
        return None


def _guarantee(
    relative: str, before: list[tuple[int | None, str]], target: Target, measured: Measured
) -> None:
    text, starts = _joined(before)
    if not _parses(text):
        return  # a notebook whose cells only parse one by one: the codemod leaves such cells out
    for finding in guarantee.unreported(text, target):
        number, line = _where(starts, finding.line)
        where = relative if number is None else f"{relative}: cell {number}"
        measured.unreported.append(f"{where}:{line}: {finding.code} {finding.message}")


def _silent(
    relative: str,
    *,
    written: str,
    after: list[tuple[int | None, str]],
    target: Target,
    resolver: Resolver,
    measured: Measured,
) -> None:
    text, starts = _joined(after)
    if not _parses(text):
        return
    installed = target == "shim" and "compat_lso.install(" in written
    told = {(f.cell, f.line) for f in measured.findings if f.path == relative and f.kind != "fix"}
    for reference in references(text):
        if resolver.resolves(reference.name, installed=installed):
            continue
        span = [_where(starts, line) for line in range(reference.first, reference.last + 1)]
        if not told.intersection(span):
            number, line = _where(starts, reference.line)
            where = relative if number is None else f"{relative}: cell {number}"
            measured.silent.append(f"{where}:{line}: {reference.name}")
