"""How the codemod's time grows with the tree and with --jobs.

    python bench/bench_codemod_scaling.py [--tree DIR] [--repeat N] [--rewrite-copies N]

1. `--check` through the CLI (a subprocess, as a user runs it, interpreter start included) on 1x,
   4x and 16x copies of the tree (default: the installed tf_keras sources); printed as ratios to 1x.
   Ideal (linear) growth is 4.0x and 16.0x; start-up cost makes small trees look cheaper.
2. Rewriting a tree of files that all need migrating (copies of the old-API training script of
   tests/codemods/fixtures, each with a real tf_keras module in front so that it has real size)
   with `--jobs 1` and `--jobs 2`; printed as a speed-up. Each timing is the best of N, the
   variants alternated; the rewrite tree is restored before every run.

Everything happens in a scratch copy; nothing installed is touched.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_codemod import OLD_API_BLOCK, default_tree  # noqa: E402


def cli(*argv: str) -> float:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "codemods", "--quiet", *argv],
        env=environment,
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if completed.returncode not in (0, 1):
        sys.exit(f"compat-lso-migrate {' '.join(argv)} failed: {completed.stderr.decode()[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--tree", type=Path, help="source tree (default: the installed tf_keras package)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    parser.add_argument(
        "--rewrite-copies", type=int, default=400, help="files in the rewrite tree (default 400)"
    )
    args = parser.parse_args()
    source = args.tree or default_tree()
    print(f"cores: {os.cpu_count()} (os.cpu_count()); python {sys.version.split()[0]}")

    with tempfile.TemporaryDirectory() as scratch:
        scratch_path = Path(scratch)
        trees = {}
        for copies in (1, 4, 16):
            tree = scratch_path / f"x{copies}"
            for index in range(copies):
                shutil.copytree(
                    source, tree / f"copy{index}", ignore=shutil.ignore_patterns("__pycache__")
                )
            trees[copies] = tree
        files = sum(1 for _ in trees[1].rglob("*.py"))
        best = {copies: float("inf") for copies in trees}
        startup = float("inf")
        for _ in range(args.repeat):
            startup = min(startup, cli("--list-rules"))
            for copies, tree in trees.items():
                best[copies] = min(best[copies], cli("--check", "--jobs", "1", str(tree)))
        print(
            f"--check --jobs 1 over copies of {source} ({files} .py files each), best of "
            f"{args.repeat}; start-up (`--list-rules`) {startup:.2f}s:"
        )
        for copies in trees:
            net = (best[copies] - startup) / (best[1] - startup)
            print(
                f"  {copies:>2}x ({copies * files:>5} files): {best[copies]:6.2f}s   "
                f"ratio to 1x = {best[copies] / best[1]:5.2f}x, without start-up {net:5.2f}x   "
                f"(ideal {float(copies):.1f}x)"
            )

        modules = sorted(trees[1].rglob("*.py"), key=lambda p: p.stat().st_size, reverse=True)[:40]
        pristine = scratch_path / "rewrite-pristine"
        pristine.mkdir()
        for index in range(args.rewrite_copies):
            module = modules[index % len(modules)].read_text(encoding="utf-8")
            (pristine / f"m{index}.py").write_text(
                module + "\n\n" + OLD_API_BLOCK, encoding="utf-8"
            )
        size = sum(p.stat().st_size for p in pristine.iterdir())
        work = scratch_path / "rewrite"
        timings = {1: float("inf"), 2: float("inf")}
        for _ in range(args.repeat):
            for jobs, fastest in timings.items():
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(pristine, work)
                timings[jobs] = min(
                    fastest, cli("--target", "keras2", "--jobs", str(jobs), str(work))
                )
        print(
            f"rewrite (every file changes) of {args.rewrite_copies} files, {size / 1e6:.1f} MB, "
            f"best of {args.repeat}:"
        )
        print(f"  --jobs 1: {timings[1]:6.2f}s")
        print(
            f"  --jobs 2: {timings[2]:6.2f}s   speed-up = {timings[1] / timings[2]:.2f}x   (ideal "
            f"2.0x on 2 cores)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
