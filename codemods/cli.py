"""compat-lso-migrate: migrate code from the deprecated mixed-precision loss-scaling API.

Exit codes: 0 nothing to do; 1 files were (or, with --check/--diff, would be) changed, or manual
work was found; 2 an error (a file that does not parse or cannot be read: reported, left untouched,
the other files still processed; or bad arguments).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TextIO

from codemods import table
from codemods.io import catalogue, formats
from codemods.io.files import Outcome, discover, migrate_bytes, process_file
from codemods.io.patch import patch
from compat_lso import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("text", "json", "github", "sarif")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compat-lso-migrate",
        description=(
            "Rewrite code written for tf.keras.mixed_precision.experimental (the deprecated "
            "loss-scaling API) to the current API. Exit status: 0 nothing to do, 1 changes or "
            "findings, 2 errors."
        ),
    )
    parser.add_argument(
        "paths",
        nargs="*",
        help="files and directories to migrate; '-' reads stdin and writes stdout",
    )
    parser.add_argument(
        "--target",
        choices=table.TARGETS,
        default="shim",
        help="what to migrate to: "
        + "; ".join(f"{t}: {h}" for t, h in table.TARGET_HELP.items())
        + " (default: shim)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if anything would change or needs manual work",
    )
    mode.add_argument(
        "--diff",
        action="store_true",
        help=(
            "write nothing; print the changes as a patch on stdout (for git apply or patch -p1, "
            "from this directory); findings and the summary go to stderr"
        ),
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="worker processes (default: all cores)",
    )
    parser.add_argument(
        "--only", metavar="CODES", help="comma-separated rule codes to run (e.g. LSO001,LSO002)"
    )
    parser.add_argument("--skip", metavar="CODES", help="comma-separated rule codes not to run")
    parser.add_argument("--list-rules", action="store_true", help="print the rule table and exit")
    parser.add_argument(
        "--explain",
        metavar="CODE",
        help="print what rule CODE (e.g. LSO020) matches, does per target and why, and exit",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--format", choices=FORMATS, default="text", help="how to print findings (default: text)"
    )
    parser.add_argument(
        "--statistics",
        action="store_true",
        help=(
            "instead of the findings, one line per rule: how many, and how many fixed, manual "
            "or notes (as ruff check --statistics; text or json), then the share fixed: "
            "fixed / (fixed + manual)"
        ),
    )
    parser.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help=(
            "no progress bar and no summary line on stderr (findings and errors are still printed)"
        ),
    )
    parser.add_argument(
        "--stdin-filename",
        default="-",
        metavar="PATH",
        help="the name to report for '-' (and to tell a notebook: *.ipynb)",
    )
    return parser


def _codes(parser: argparse.ArgumentParser, option: str, value: str | None) -> set[str]:
    if value is None:
        return set()
    codes = {c.strip().upper() for c in value.split(",") if c.strip()}
    unknown = codes - set(table.RULES_BY_CODE)
    if unknown:
        parser.error(
            f"{option}: unknown rule code(s) {', '.join(sorted(unknown))}; "
            f"see --list-rules for the codes ({', '.join(table.RULES_BY_CODE)})"
        )
    return codes


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_rules:
        print(rule_listing())
        return EXIT_CLEAN
    if args.explain:
        (code,) = _codes(parser, "--explain", args.explain) or {""}
        print(catalogue.explain(code))
        return EXIT_CLEAN
    if not args.paths:
        parser.error("no paths given: pass files or directories to migrate, or '-' to read stdin")
    if args.statistics and args.format not in ("text", "json"):
        parser.error(f"--statistics prints text or json, not --format {args.format}")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    enabled = set(table.RULES_BY_CODE)
    if args.only:
        enabled = _codes(parser, "--only", args.only)
    enabled -= _codes(parser, "--skip", args.skip)
    write = not (args.check or args.diff)

    if args.paths == ["-"]:
        outcome = migrate_bytes(
            args.stdin_filename,
            sys.stdin.buffer.read(),
            args.target,
            frozenset(enabled),
            as_written=write,
        )
        if outcome.error is None and write:
            sys.stdout.write(outcome.text)
            stream = sys.stderr
        else:
            stream = sys.stdout
        return _report([outcome], args, stream=stream)
    if "-" in args.paths:
        parser.error("'-' (stdin) cannot be combined with other paths")
    try:
        paths = [str(p) for p in discover(args.paths)]
    except FileNotFoundError as error:
        parser.error(str(error))
    try:
        outcomes = run(
            paths,
            args.target,
            enabled=frozenset(enabled),
            write=write,
            jobs=args.jobs,
            progress=not args.quiet and sys.stderr.isatty(),
        )
    except BrokenProcessPool:
        # A worker was killed (the OOM killer, a signal): the run cannot say what it found, but
        # every write is atomic, so no file is half-written.
        state = (
            "each file is either unchanged or completely rewritten"
            if write
            else "nothing was written"
        )
        sys.stderr.write(
            f"error: a --jobs worker process died before the run finished (killed, or out of "
            f"memory?); {state}. Run again: files already migrated are left as they are, and "
            f"--jobs 1 does all the work in this one process.\n"
        )
        return EXIT_ERROR
    return _report(outcomes, args, stream=sys.stdout)


# Runs over fewer files than this finish before a progress bar would tell anything.
PROGRESS_MIN_FILES = 50


def run(
    paths: list[str],
    target: table.Target,
    *,
    enabled: frozenset[str] | None,
    write: bool,
    jobs: int,
    progress: bool = False,
) -> list[Outcome]:
    """Process every path, in worker processes when there is enough work to share.

    With `progress`, a bar on stderr counts the files (only for runs of PROGRESS_MIN_FILES or more).
    """
    outcomes: Iterable[Outcome]
    if jobs == 1 or len(paths) < 2 * jobs:
        outcomes = (process_file(p, target, enabled, write) for p in paths)
        return list(_progress(outcomes, len(paths)) if progress else outcomes)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        chunk = max(1, len(paths) // (jobs * 8))
        outcomes = pool.map(
            process_file,
            paths,
            [target] * len(paths),
            [enabled] * len(paths),
            [write] * len(paths),
            chunksize=chunk,
        )
        return list(_progress(outcomes, len(paths)) if progress else outcomes)


def _progress(outcomes: Iterable[Outcome], total: int) -> Iterable[Outcome]:
    if total < PROGRESS_MIN_FILES:
        return outcomes
    # tqdm: the maintained, dependency-free progress bar; imported here so that short runs never
    # pay for it.
    from tqdm import tqdm

    return tqdm(
        outcomes, total=total, unit="file", file=sys.stderr, leave=False, desc="compat-lso-migrate"
    )


def _report(outcomes: list[Outcome], args: argparse.Namespace, stream: TextIO) -> int:
    """Print the findings, errors and summary; returns the exit status.

    With --diff, stdout carries the patch alone (as ruff does): findings in every format, errors
    and the summary go to stderr, so `compat-lso-migrate --diff . > fix.patch` is a patch.
    """
    if args.diff:
        stream.flush()
        for chunk in patch(outcomes):
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        stream = sys.stderr
    errors = [o for o in outcomes if o.error]
    changed = [o for o in outcomes if o.changed and not o.error]
    findings = [
        (o.path, f) for o in outcomes if o.result and not o.error for f in o.result.findings
    ]
    # In write mode what was rewritten is done; what is left is the manual work, and the notes
    # (behaviour kept or changed by design), which are never hidden.
    shown = (
        findings
        if (args.check or args.diff or args.format != "text")
        else [(p, f) for p, f in findings if not f.fixed or f.note]
    )
    if args.statistics:
        # One line per rule, then the share fixed for the target (JSON: the last element).
        # The manual findings by why they stay manual: in the text between the two, in JSON
        # in the last element.
        rows = formats.statistics(f for _, f in findings)
        share = formats.share_fixed(rows, args.target)
        reasons = formats.by_reason(f for _, f in findings)
        if args.format == "json":
            stream.write(json.dumps([*rows, share | {"by_reason": reasons}], indent=2) + "\n")
        else:
            lines = [
                *formats.statistics_text(rows),
                *formats.by_reason_text(reasons),
                formats.share_fixed_text(share),
            ]
            stream.writelines(line + "\n" for line in lines)
    elif args.format == "text":
        stream.writelines(formats.text(path, finding) + "\n" for path, finding in shown)
    elif args.format == "json":
        stream.write(
            json.dumps(
                [formats.as_dict(p, f) for p, f in shown]
                + [{"path": o.path, "error": o.error} for o in errors],
                indent=2,
            )
            + "\n"
        )
    elif args.format == "github":
        for path, finding in shown:
            stream.write(formats.github(path, finding) + "\n")
        for outcome in errors:
            where = f"file={outcome.path},title=compat-lso-migrate"
            stream.write(f"::error {where}::{formats.github_escape(outcome.error or '')}\n")
    else:
        sarif = formats.sarif(shown, [(o.path, o.error or "") for o in errors])
        stream.write(json.dumps(sarif, indent=2) + "\n")
    if args.format == "text" or args.statistics:
        for outcome in errors:
            sys.stderr.write(f"{outcome.path}: error: {outcome.error}\n")
        verb = "would rewrite" if (args.check or args.diff) else "rewrote"
        manual = sum(1 for _, f in findings if not f.fixed)
        notes = sum(1 for _, f in findings if f.note)
        summary = (
            f"{verb} {len(changed)} file(s); {manual} finding(s) need manual work; "
            f"{notes} note(s); {len(errors)} error(s)"
        )
        if not args.quiet and args.format == "text":
            sys.stderr.write(summary + "\n")
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if (changed or any(not f.fixed for _, f in findings)) else EXIT_CLEAN


def rule_listing() -> str:
    width = max(len(r.name) for r in table.RULES)
    lines = [f"{'code':7} {'name':{width}}  keras2  keras3  shim    summary"]
    for rule in table.RULES:
        actions = "  ".join(f"{rule.action[t]:6}" for t in table.TARGETS)
        lines.append(f"{rule.code:7} {rule.name:{width}}  {actions}  {rule.summary}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
