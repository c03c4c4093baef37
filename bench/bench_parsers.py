"""Why the codemod parses with `ast`: each parser's cost against a libcst parse, in the same run.

    python bench/bench_parsers.py [--tree DIR] [--files N] [--rounds N]

Over the Python files of a large tree (default: the installed tf_keras sources; `--files N` takes
the N largest), each round times, one after the other:

  libcst_parse      libcst.parse_module of every file (the baseline: 1.00x)
  ast_parse         ast.parse of every file, with positions (what codemods/apply/engine.py does)
  libcst_noop       a libcst transformer that changes nothing, visiting every parsed module
                    (the cost a libcst-transformer rule would pay before doing anything)
  qualified_names   libcst's QualifiedNameProvider resolved over every parsed module (what
                    codemods/meaning/names.py replaces)

and prints each as a ratio to libcst_parse measured in the same round: the median over the rounds
with the lowest and highest round, and the absolute seconds for context only. docs/codemod.md
quotes these ratios.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import libcst
from libcst.metadata import MetadataWrapper, QualifiedNameProvider


def default_tree() -> Path:
    spec = importlib.util.find_spec("tf_keras")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("tf_keras is not installed: `pip install tf-keras`, or pass --tree DIR")
    return Path(next(iter(spec.submodule_search_locations)))


class _NoOp(libcst.CSTTransformer):
    """Visits every node and changes nothing."""


def _timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tree", type=Path, help="a directory of Python files (default: tf_keras)")
    parser.add_argument("--files", type=int, default=0, help="only the N largest files (0: all)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default: 5)")
    arguments = parser.parse_args()

    tree = arguments.tree or default_tree()
    paths = sorted(tree.rglob("*.py"), key=lambda p: p.stat().st_size, reverse=True)
    if arguments.files:
        paths = paths[: arguments.files]
    sources = [p.read_text(encoding="utf-8") for p in paths]
    size = sum(len(s.encode("utf-8")) for s in sources) / 1e6
    modules = [libcst.parse_module(s) for s in sources]

    def libcst_parse() -> None:
        for source in sources:
            libcst.parse_module(source)

    def ast_parse() -> None:
        for source in sources:
            ast.parse(source)

    def libcst_noop() -> None:
        for module in modules:
            module.visit(_NoOp())

    def qualified_names() -> None:
        for module in modules:
            MetadataWrapper(module, unsafe_skip_copy=True).resolve(QualifiedNameProvider)

    cases = {
        "ast_parse": ast_parse,
        "libcst_noop": libcst_noop,
        "qualified_names": qualified_names,
    }
    baseline: list[float] = []
    ratios: dict[str, list[float]] = {name: [] for name in cases}
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(arguments.rounds):
        base = _timed(libcst_parse)
        baseline.append(base)
        for name, function in cases.items():
            took = _timed(function)
            seconds[name].append(took)
            ratios[name].append(took / base)

    print(
        f"tree: {tree} ({len(paths)} .py files, {size:.1f} MB); {arguments.rounds} rounds; "
        f"python {sys.version.split()[0]}, libcst {libcst_version()}"
    )
    print(f"{'case':<36} {'median':>8} {'min':>7} {'max':>7}   seconds (median)")
    print(
        f"{'libcst_parse (baseline)':<36} {'1.00x':>8} {'':>7} {'':>7}   "
        f"{statistics.median(baseline):.2f}s"
    )
    for name in cases:
        values = ratios[name]
        print(
            f"{name + '/libcst_parse':<36} {statistics.median(values):>7.3f}x "
            f"{min(values):>7.3f} {max(values):>7.3f}   {statistics.median(seconds[name]):.2f}s"
        )
    return 0


def libcst_version() -> str:
    from importlib.metadata import version

    return version("libcst")


if __name__ == "__main__":
    sys.exit(main())
