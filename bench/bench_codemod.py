"""Benchmark the codemod against a plain libcst parse and TensorFlow's tf_upgrade_v2, same tree, same run.

    python bench/bench_codemod.py [--tree DIR] [--repeat N] [--rewrite-files N]

The large tree defaults to the installed tf_keras sources (`pip install tf-keras`). It is copied to
a temporary directory first, so nothing installed is touched. Printed verdicts are ratios measured
in this run, never absolute times (those are printed for context only):

  check/plain_parse    `--check` over the whole tree (discovery, prefilter, analysis of what passes)
                       against reading and libcst-parsing every file of it. Target: <= 0.10x.
  rewrite/plain_parse  migrating files that do contain targets (tf_keras files with an old-API
                       training block appended) against libcst-parsing the same files. Target: <= 2x.
  check/tf_upgrade_v2  `compat-lso-migrate --check` against `tf_upgrade_v2` on the same tree, both
                       as the commands a user runs (process start included).

Everything runs on one core (`--jobs 1`) so the ratios compare work, not parallelism.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcst

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.cli import run  # noqa: E402
from codemods.engine import migrate  # noqa: E402
from codemods.files import discover  # noqa: E402

OLD_API_BLOCK = (ROOT / "tests" / "codemods" / "fixtures" / "train_script.before.py").read_text(encoding="utf-8")


def best_of(repeat: int, function) -> float:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        timings.append(time.perf_counter() - start)
    return min(timings)


def default_tree() -> Path:
    spec = importlib.util.find_spec("tf_keras")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("tf_keras is not installed: `pip install tf-keras`, or pass --tree DIR")
    return Path(next(iter(spec.submodule_search_locations)))


def plain_parse(paths: list[Path]) -> None:
    for path in paths:
        libcst.parse_module(path.read_bytes())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, help="source tree (default: the installed tf_keras package)")
    parser.add_argument("--repeat", type=int, default=3, help="best of N for the in-process timings (default 3)")
    parser.add_argument("--rewrite-files", type=int, default=60, help="files in the rewrite corpus (default 60)")
    parser.add_argument("--tf-upgrade", default=shutil.which("tf_upgrade_v2") or str(Path(sys.executable).parent / "tf_upgrade_v2"),
                        help="the tf_upgrade_v2 executable (default: next to this Python)")
    args = parser.parse_args()

    source = args.tree or default_tree()
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        shutil.copytree(source, tree, ignore=shutil.ignore_patterns("__pycache__"))
        paths = list(discover([str(tree)]))
        python_files = [p for p in paths if p.suffix == ".py"]
        size = sum(p.stat().st_size for p in python_files)
        print(f"tree: {source} ({len(python_files)} .py files, {size / 1e6:.1f} MB), copied to a scratch directory")

        parse_time = best_of(args.repeat, lambda: plain_parse(python_files))
        check_time = best_of(args.repeat, lambda: run([str(p) for p in paths], "shim", None, False, 1))
        outcomes = run([str(p) for p in paths], "shim", None, False, 1)
        parsed = sum(1 for o in outcomes if o.result is not None)

        # Files with targets: real modules with an old-API training script appended.
        rewrite_dir = Path(scratch) / "rewrite"
        rewrite_dir.mkdir()
        biggest = sorted(python_files, key=lambda p: p.stat().st_size, reverse=True)
        corpus = []
        for index, path in enumerate(biggest[: args.rewrite_files]):
            text = path.read_text(encoding="utf-8")
            corpus.append(text + "\n\n" + OLD_API_BLOCK)
        corpus_parse = best_of(args.repeat, lambda: [libcst.parse_module(text) for text in corpus])
        corpus_rewrite = best_of(args.repeat, lambda: [migrate(text, "keras2") for text in corpus])
        changed = sum(1 for text in corpus if migrate(text, "keras2").text != text)

        environment = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "codemods", "--check", "--jobs", "1", str(tree)],
                       env=environment, capture_output=True, check=False)
        cli_check = time.perf_counter() - start
        upgrade_time = None
        if Path(args.tf_upgrade).exists():
            start = time.perf_counter()
            completed = subprocess.run(
                [args.tf_upgrade, "--intree", str(tree), "--outtree", str(Path(scratch) / "upgraded"),
                 "--reportfile", str(Path(scratch) / "report.txt")],
                env=environment, capture_output=True, check=False)
            upgrade_time = time.perf_counter() - start if completed.returncode == 0 else None

    print(f"check: {parsed} of {len(paths)} files passed the prefilter and were analysed")
    print(f"rewrite corpus: the {len(corpus)} largest files + an old-API block each; {changed} rewritten")
    print(f"(context: plain parse {parse_time:.2f}s, check {check_time:.3f}s, corpus parse {corpus_parse:.2f}s, "
          f"corpus rewrite {corpus_rewrite:.2f}s, CLI check {cli_check:.2f}s"
          + (f", tf_upgrade_v2 {upgrade_time:.1f}s)" if upgrade_time else ")"))
    print(f"check/plain_parse = {check_time / parse_time:.3f}x   (target <= 0.10x)")
    print(f"rewrite/plain_parse = {corpus_rewrite / corpus_parse:.2f}x   (target <= 2x)")
    if upgrade_time:
        print(f"check/tf_upgrade_v2 = {cli_check / upgrade_time:.3f}x   (both as commands, process start included)")
    else:
        print("check/tf_upgrade_v2: not measured (tf_upgrade_v2 not found or failed; pass --tf-upgrade)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
