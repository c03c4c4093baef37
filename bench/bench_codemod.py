"""Benchmark the codemod against a plain libcst parse and tf_upgrade_v2: same tree, same run.

    python bench/bench_codemod.py [--tree DIR] [--repeat N] [--rewrite-files N]

The large tree defaults to the installed tf_keras sources (`pip install tf-keras`). It is copied to
a temporary directory first, so nothing installed is touched. Printed verdicts are ratios measured
in this run, never absolute times (those are printed for context only):

  check/plain_parse    `--check` over the whole tree (discovery, prefilter, analysis of what passes)
                       against reading and libcst-parsing every file of it. Target: <= 0.10x.
  rewrite/plain_parse  migrating files that do contain targets (tf_keras files with an old-API
                       training block appended) against libcst-parsing the same files.
                       Target: <= 2x.
  sweep share          the part of each figure above that is the final sweep
  (codemods/sweep/findings.py):
                       the same runs with the sweep's codes switched off, in the same rounds.
  check/tf_upgrade_v2  `--check` against TensorFlow's tf_upgrade_v2 upgrader on the same files, both
                       in this process (TensorFlow's import excluded). The `tf_upgrade_v2` command
                       itself aborts on the tf_keras tree (its pasta dependency crashes on a Python
                       3.11 f-string), so its upgrader is driven file by file and failures counted.

Everything runs on one core (`--jobs 1`) so the ratios compare work, not parallelism.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import libcst

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.apply.engine import migrate  # noqa: E402
from codemods.cli import run  # noqa: E402
from codemods.io.files import discover  # noqa: E402
from codemods.table import RULES_BY_CODE, SWEEP_CODES  # noqa: E402

WITHOUT_SWEEP = frozenset(RULES_BY_CODE) - SWEEP_CODES

OLD_API_BLOCK = (ROOT / "tests" / "codemods" / "fixtures" / "train_script.before.py").read_text(
    encoding="utf-8"
)


def interleaved(repeat: int, *functions: Callable[[], object]) -> list[float]:
    """Best-of-`repeat` seconds of each function, run alternately."""
    best = [float("inf")] * len(functions)
    for _ in range(repeat):
        for index, function in enumerate(functions):
            start = time.perf_counter()
            function()
            best[index] = min(best[index], time.perf_counter() - start)
    return best


def default_tree() -> Path:
    spec = importlib.util.find_spec("tf_keras")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("tf_keras is not installed: `pip install tf-keras`, or pass --tree DIR")
    return Path(next(iter(spec.submodule_search_locations)))


def tf_upgrade_v2(paths: list[Path], out: Path) -> tuple[float, int] | None:
    """Seconds TensorFlow's tf_upgrade_v2 upgrader takes over `paths`, and how many it failed on."""
    try:
        from tensorflow.tools.compatibility import ast_edits
        from tensorflow.tools.compatibility import tf_upgrade_v2 as spec
    except ImportError:
        return None
    out.mkdir()
    upgrader = ast_edits.ASTCodeUpgrader(spec.TFAPIChangeSpec())
    failed = 0
    start = time.perf_counter()
    with (
        open(os.devnull, "w") as quiet,
        contextlib.redirect_stdout(quiet),
        contextlib.redirect_stderr(quiet),
    ):
        logging.disable(
            logging.INFO
        )  # it logs a line per file; that is part of its cost, not of the report
        for index, path in enumerate(paths):
            try:
                upgrader.process_file(str(path), str(out / f"{index}.py"))
            except Exception:
                failed += 1
        logging.disable(logging.NOTSET)
    return time.perf_counter() - start, failed


def plain_parse(paths: list[Path]) -> None:
    for path in paths:
        libcst.parse_module(path.read_bytes())


def share(total: float, without: float) -> str:
    """The sweep's part of `total`, as a percentage (best-of timings: noise can make it < 0)."""
    return f"{100 * (total - without) / total:.0f}% ({total - without:+.3f}s)"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--tree", type=Path, help="source tree (default: the installed tf_keras package)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="best of N for the in-process timings (default 3)"
    )
    parser.add_argument(
        "--rewrite-files", type=int, default=60, help="files in the rewrite corpus (default 60)"
    )
    args = parser.parse_args()

    source = args.tree or default_tree()
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        shutil.copytree(source, tree, ignore=shutil.ignore_patterns("__pycache__"))
        paths = list(discover([str(tree)]))
        python_files = [p for p in paths if p.suffix == ".py"]
        size = sum(p.stat().st_size for p in python_files)
        print(
            f"tree: {source} ({len(python_files)} .py files, {size / 1e6:.1f} MB), copied to a "
            f"scratch directory"
        )

        # Interleaved rounds, best of each: a load burst on a shared machine hits both sides alike.
        files = [str(p) for p in paths]
        parse_time, check_time, check_unswept = interleaved(
            args.repeat,
            lambda: plain_parse(python_files),
            lambda: run(files, "shim", enabled=None, write=False, jobs=1),
            lambda: run(files, "shim", enabled=WITHOUT_SWEEP, write=False, jobs=1),
        )
        outcomes = run([str(p) for p in paths], "shim", enabled=None, write=False, jobs=1)
        parsed = sum(1 for o in outcomes if o.result is not None)

        # Files with targets: real modules with an old-API training script appended.
        rewrite_dir = Path(scratch) / "rewrite"
        rewrite_dir.mkdir()
        biggest = sorted(python_files, key=lambda p: p.stat().st_size, reverse=True)
        corpus = []
        for path in biggest[: args.rewrite_files]:
            text = path.read_text(encoding="utf-8")
            corpus.append(text + "\n\n" + OLD_API_BLOCK)
        corpus_parse, corpus_rewrite, rewrite_unswept = interleaved(
            args.repeat,
            lambda: [libcst.parse_module(t) for t in corpus],
            lambda: [migrate(t, "keras2") for t in corpus],
            lambda: [migrate(t, "keras2", WITHOUT_SWEEP) for t in corpus],
        )
        changed = sum(1 for text in corpus if migrate(text, "keras2").text != text)

        environment = {**os.environ, "PYTHONPATH": str(ROOT)}
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "codemods", "--check", "--jobs", "1", str(tree)],
            env=environment,
            capture_output=True,
            check=False,
        )
        cli_check = time.perf_counter() - start
        upgrade = tf_upgrade_v2(python_files, Path(scratch) / "upgraded")

    print(f"check: {parsed} of {len(paths)} files passed the prefilter and were analysed")
    print(
        f"rewrite corpus: the {len(corpus)} largest files + an old-API block each; {changed} "
        f"rewritten"
    )
    print(
        f"(context: plain parse {parse_time:.2f}s, check {check_time:.3f}s, corpus parse "
        f"{corpus_parse:.2f}s, corpus rewrite {corpus_rewrite:.2f}s, CLI check {cli_check:.2f}s"
        + (f", tf_upgrade_v2 {upgrade[0]:.1f}s)" if upgrade else ")")
    )
    print(f"check/plain_parse = {check_time / parse_time:.3f}x   (target <= 0.10x)")
    print(f"rewrite/plain_parse = {corpus_rewrite / corpus_parse:.2f}x   (target <= 2x)")
    print(
        f"sweep share: check {share(check_time, check_unswept)}, rewrite "
        f"{share(corpus_rewrite, rewrite_unswept)} (the same runs with the sweep off: "
        f"check/plain_parse {check_unswept / parse_time:.3f}x, rewrite/plain_parse "
        f"{rewrite_unswept / corpus_parse:.2f}x)"
    )
    if upgrade:
        seconds, failed = upgrade
        print(
            f"check/tf_upgrade_v2 = {check_time / seconds:.4f}x   (tf_upgrade_v2 failed on "
            f"{failed} of {len(python_files)} files)"
        )
    else:
        print("check/tf_upgrade_v2: not measured (TensorFlow is not installed here)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
