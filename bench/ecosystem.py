"""The codemod on real repositories it was not tuned on: the ecosystem check (docs/ecosystem.md).

    python bench/ecosystem.py --repos DIR [--json FILE] [--write-baseline] [--repeat N]

DIR (or the environment variable COMPAT_LSO_ECOSYSTEM_REPOS) holds a clone or snapshot of each
repository of bench/ecosystem_check/manifest.toml (layouts: bench/ecosystem_check/snapshots.py).
For each repository, its files at the pinned commit are copied into a scratch folder and migrated
for every target through the project's own API; the command prints, per repository and for the
tuning half, the check half and the check half without the repositories earlier rounds were tuned
on: crashes, outputs that do not parse, second-run changes, the sweep's flags left unreported,
removed names left silent (resolved against the installed TensorFlow), findings by code, the
share fixed, and `--check` against a plain libcst parse of the same files. Then what changed
against bench/ecosystem_check/baseline.json.

For developers: it needs the clones (network to make them), so CI never runs it. A repository
missing from DIR is listed and left out of the figures, never an error.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from ecosystem_check import manifest, measure, report, resolve, snapshots, timing  # noqa: E402

from codemods.table import TARGETS, Target  # noqa: E402

ENVIRONMENT = "COMPAT_LSO_ECOSYSTEM_REPOS"


def collect(
    entries: list[manifest.Entry],
    folder: Path,
    scratch: Path,
    *,
    targets: Iterable[Target] = TARGETS,
    resolver: resolve.Resolver | None = None,
    progress: bool = False,
) -> list[report.Repository]:
    """Take each entry's files from `folder` into `scratch` and measure every target on them."""
    targets = tuple(targets)
    repositories = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(entries) * len(targets), unit="run", file=sys.stderr, leave=False)
    for index, entry in enumerate(entries):
        root = scratch / f"{index:03d}"
        snapshot = snapshots.take(folder, entry, root)
        repository = report.Repository(entry, snapshot)
        for target in targets:
            if bar is not None:
                bar.set_description(f"{entry.name} [{target}]"[:48])
            if snapshot.present:
                repository.targets[target] = measure.measure(root, snapshot.files, target, resolver)
            if bar is not None:
                bar.update()
        repositories.append(repository)
    if bar is not None:
        bar.close()
    return repositories


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repos", type=Path, help=f"the folder of clones (or ${ENVIRONMENT})")
    parser.add_argument("--manifest", type=Path, default=manifest.MANIFEST)
    parser.add_argument("--baseline", type=Path, default=report.BASELINE)
    parser.add_argument("--write-baseline", action="store_true", help="store today's counts")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write everything measured")
    parser.add_argument("--only", metavar="TEXT", help="only repositories whose name contains it")
    parser.add_argument("--repeat", type=int, default=3, help="timing rounds (0: no timing)")
    parser.add_argument(
        "--timing",
        choices=("folders", "files"),
        default="folders",
        help="time --check over every Python file in the folders of the manifest's files "
        "(default: as a user runs it over a project) or over the manifest's files only",
    )
    parser.add_argument(
        "--no-resolve", action="store_true", help="do not import TensorFlow to resolve names"
    )
    args = parser.parse_args(argv)
    folder = args.repos or (Path(os.environ[ENVIRONMENT]) if ENVIRONMENT in os.environ else None)
    if folder is None or not folder.is_dir():
        parser.error(
            f"--repos DIR (or ${ENVIRONMENT}) must name the folder of clones, got {folder}; "
            "docs/ecosystem.md says how to fill it"
        )
    try:
        entries = manifest.load(args.manifest)
    except manifest.ManifestError as error:
        parser.error(str(error))
    if args.only:
        entries = [e for e in entries if args.only in e.name]
    seen = manifest.seen_repositories(entries)
    chosen = manifest.selections(entries)
    names = {label: len({e.name for e in group}) for label, group in chosen.items()}
    print(
        f"manifest: {len({e.name for e in entries})} repositories ({len(entries)} entries); "
        f"tuning half {names['tuning']}, check half {names['check']} "
        f"({names['check-unseen']} not seen before)"
    )
    resolver = None if args.no_resolve else resolve.Resolver()
    if resolver is not None:
        judged = ", ".join(resolver.targets()) or "none (TensorFlow is not installed)"
        print(f"removed names resolved against the installed TensorFlow for: {judged}")
    with tempfile.TemporaryDirectory(prefix="ecosystem-") as scratch:
        repositories = collect(
            entries, folder, Path(scratch), resolver=resolver, progress=sys.stderr.isatty()
        )
        around = args.timing == "folders"
        timings = _timings(repositories, Path(scratch), args.repeat, around=around)
    _print(repositories, seen, timings)
    current = report.baseline([r for r in repositories if r.snapshot.present])
    old = report.read_baseline(args.baseline)
    if old is None:
        print(f"\nno baseline at {args.baseline} (write one with --write-baseline)")
    else:
        moved = report.diff(old, current)
        print(f"\nagainst the baseline ({len(moved)} changes):")
        print("\n".join(f"  {line}" for line in moved) or "  nothing changed")
    if args.write_baseline:
        report.write_baseline([r for r in repositories if r.snapshot.present], args.baseline)
        print(f"baseline written: {args.baseline}")
    if args.json:
        extra = {
            "selections": {
                label: {
                    target: report.summary(_of(repositories, group), target) for target in TARGETS
                }
                for label, group in chosen.items()
            },
            "timing": {label: t.__dict__ for label, t in timings.items()},
        }
        args.json.write_text(json.dumps(report.as_json(repositories, extra), indent=1) + "\n")
    return 0


def _of(
    repositories: list[report.Repository], group: list[manifest.Entry]
) -> list[report.Repository]:
    keys = {e.key for e in group}
    return [r for r in repositories if r.entry.key in keys and r.snapshot.present]


def _timings(
    repositories: list[report.Repository], scratch: Path, repeat: int, *, around: bool
) -> dict[str, timing.Timing]:
    """Per half, `--check` against a plain parse over the manifest's files or the folders
    around them (taken into `scratch`, never the measured copies)."""
    if repeat < 1:
        return {}
    result: dict[str, timing.Timing] = {}
    for half in manifest.HALVES:
        paths = []
        for index, r in enumerate(repositories):
            if r.entry.half != half or not r.snapshot.present:
                continue
            if around:
                root = scratch / "around" / f"{index:03d}"
                paths += [root / p for p in snapshots.take_around(r.snapshot, root)]
            else:
                paths += [scratch / f"{index:03d}" / p for p in r.snapshot.files]
        if paths:
            result[half] = _measured_apart(paths, repeat)
    return result


def _measured_apart(paths: list[Path], repeat: int) -> timing.Timing:
    """timing.measure in a fresh interpreter with no TensorFlow in it, as a user's `--check` runs.
    The resolution above imported TensorFlow here, and the cycle collector scans its objects
    during a libcst parse (making the reference slower) but not during `--check`, which pauses it
    while a module migrates: measured here, the ratio came out 20-40% lower than alone."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(timing.measure, paths, repeat).result()


def _print(
    repositories: list[report.Repository], seen: set[str], timings: dict[str, timing.Timing]
) -> None:
    missing = [r for r in repositories if not r.snapshot.present]
    print(f"\nnot measured ({len(missing)}):" if missing else "\nevery repository was found")
    for r in missing:
        print(f"  {r.entry.key}: {r.snapshot.problem}")
    issues = [(r, issue) for r in repositories for issue in r.snapshot.issues if r.snapshot.present]
    for r, issue in issues:
        print(f"  {r.entry.key}: file left out: {issue}")
    print("\nper repository (target fixed/manual/notes, !defects):")
    for r in repositories:
        if r.snapshot.present:
            print(f"  {report.repository_line(r, seen)}")
    entries = [r.entry for r in repositories]
    for label, group in manifest.selections(entries).items():
        chosen = _of(repositories, group)
        files = sum(len(r.snapshot.files) for r in chosen)
        print(f"\n== {label}: {len({r.entry.name for r in chosen})} repositories, {files} files ==")
        print("\n".join(report.table(chosen)))
        for target in TARGETS:
            print(f"manual findings by code ({target}):")
            print("\n".join(report.manual_groups(chosen, target, examples=0)) or "  none")
            print(f"manual findings by reason ({target}):")
            print("\n".join(report.reason_groups(chosen, target)) or "  none")
    defects = report.defect_lines([r for r in repositories if r.snapshot.present])
    print(f"\ndefects ({len(defects)}):")
    print("\n".join(f"  {line}" for line in defects) or "  none")
    for half, measured in timings.items():
        print(f"\n{half} half: {measured.text()}")


if __name__ == "__main__":
    sys.exit(main())
