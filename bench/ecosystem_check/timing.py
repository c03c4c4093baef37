"""`--check` against a plain libcst parse of the same files, as bench/bench_codemod.py measures it.

Both run in this process on one core, in interleaved rounds (a load burst on a shared machine hits
both alike); the figure is the best round of each, and the spread is the ratio of every round.
Notebooks count in both: their code cells, IPython masked, parsed as one module, as the codemod
joins them.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import libcst

from codemods.cli import run
from codemods.io.files import decode
from ecosystem_check.measure import sources


@dataclass(frozen=True)
class Timing:
    files: int
    check: float  # best seconds of `--check` (shim, write nothing, one job)
    parse: float  # best seconds of reading and libcst-parsing every file
    rounds: tuple[float, ...]  # check / parse of each round

    @property
    def ratio(self) -> float:
        return self.check / self.parse if self.parse else float("nan")

    def text(self) -> str:
        spread = (
            f"rounds {min(self.rounds):.3f}-{max(self.rounds):.3f}x, median "
            f"{statistics.median(self.rounds):.3f}x"
            if self.rounds
            else "no rounds"
        )
        return (
            f"check/plain_parse = {self.ratio:.3f}x over {self.files} files (best of "
            f"{len(self.rounds)}: check {self.check:.2f}s, parse {self.parse:.2f}s; {spread})"
        )


def plain_parse(paths: list[Path]) -> None:
    for path in paths:
        if path.suffix == ".ipynb":
            try:
                cells = sources(path.name, decode(path.read_bytes())[0])
            except (ValueError, KeyError, TypeError):
                continue
            try:
                libcst.parse_module("".join(source for _, source in cells))
            except libcst.ParserSyntaxError:
                continue
        else:
            try:
                libcst.parse_module(path.read_bytes())
            except libcst.ParserSyntaxError:
                continue


def measure(paths: list[Path], repeat: int) -> Timing:
    """Best-of-`repeat` seconds of `--check` and of a plain parse over `paths`, interleaved."""
    files = [str(p) for p in paths]

    def check() -> None:
        run(files, "shim", enabled=None, write=False, jobs=1)

    rounds: list[tuple[float, float]] = []
    for _ in range(max(1, repeat)):
        rounds.append((_seconds(check), _seconds(lambda: plain_parse(paths))))
    return Timing(
        files=len(paths),
        check=min(c for c, _ in rounds),
        parse=min(p for _, p in rounds),
        rounds=tuple(c / p for c, p in rounds if p),
    )


def _seconds(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start
