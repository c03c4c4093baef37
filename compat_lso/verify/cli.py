"""The verify command: its arguments, the two runs, the verdict (exit 0 equal, 1 diverged, 2
could not run)."""

from __future__ import annotations

import argparse
import contextlib
import pathlib
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from compat_lso.verify import compare, plot, report, sides, trace_file
from compat_lso.verify.reasons import Reasons, gather

PROG = "python -m compat_lso verify"
USAGE = (
    f"{PROG} [--steps N] [--against REF | --before CMD] [--before-python PATH] "
    "[--seed S | --no-seed] [--rtol R] [--json FILE] [--plot FILE.png] [--] SCRIPT [ARGS...] | "
    "-m MODULE [ARGS...]"
)
DEFAULT_STEPS = 20
DEFAULT_SEED = 0
# --before-python's default tolerance: two TensorFlow releases round float16 apart (their CPU
# kernels differ: oneDNN, Eigen), each rounding one float16 unit in the last place, 2**-10
# relative, in a value or a gradient; a loss or a sum of squares moves by a few of those over
# some steps (the bundled example project, TF 2.15 against TF 2.21: at most 8e-4 in 12 steps).
# Eight units, 2**-7 (0.78%), is ten times that, and far below what a break of the migration
# changes: a gradient scaled twice or not at all (by the loss scale, 2**10 and more), a learning
# rate of another step or another schedule, a step not applied (`applied` and `iterations`, and
# how many gradients were None, are compared exactly whatever the tolerance).
RELEASES_RTOL = 2.0**-7


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        usage=USAGE,
        description="Train the old code (git's REF, through `run`: TF 2.4's meaning) and the "
        "working tree as migrated (through `trace`) for N optimizer steps each, seeded alike, "
        "and compare them step by step. Exit status: 0 equal, 1 diverged, 2 could not run.",
    )
    parser.add_argument(
        "--steps", type=int, default=DEFAULT_STEPS, metavar="N",
        help=f"loss scale optimizer steps per run (default {DEFAULT_STEPS})",
    )  # fmt: skip
    old = parser.add_mutually_exclusive_group()
    old.add_argument(
        "--against", metavar="REF",
        help="the old code: this git commit, branch or tag (default HEAD), checked out to a "
        "temporary worktree and run through `python -m compat_lso run`",
    )  # fmt: skip
    old.add_argument(
        "--before", metavar="CMD",
        help="the old code: this command instead (a shell-quoted string), run with the trace's "
        "variables set (e.g. \"python -m compat_lso run ../old/train.py\")",
    )  # fmt: skip
    parser.add_argument(
        "--before-python", metavar="PATH",
        help="run the old code with this Python (an environment with the old TensorFlow, e.g. "
        "TF 2.15) and compare within --rtol (default 2**-7: the two releases' float16 "
        "rounding); the same compat_lso runs on both sides",
    )  # fmt: skip
    seeds = parser.add_mutually_exclusive_group()
    seeds.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, metavar="S",
        help=f"seed both runs with S right after TensorFlow's import (default {DEFAULT_SEED}), "
        "and turn on op determinism",
    )  # fmt: skip
    seeds.add_argument("--no-seed", action="store_true", help="seed neither run")
    parser.add_argument(
        "--rtol", type=float, default=None, metavar="R",
        help="accept floats within this relative difference where the runs are not equal bit "
        f"for bit (default 0; with --before-python {RELEASES_RTOL:g})",
    )  # fmt: skip
    parser.add_argument("--json", metavar="FILE", help="also write the whole comparison as JSON")
    parser.add_argument(
        "--plot", metavar="FILE.png",
        help="also draw the loss and loss scale of both runs (needs the `plot` extra)",
    )  # fmt: skip
    parser.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m")
    parser.add_argument("program", nargs=argparse.REMAINDER, help="SCRIPT [ARGS...]")
    return parser


def main(argv: list[str], progress: bool | None = None) -> int:
    parser = _parser()
    arguments = parser.parse_args(argv)
    program = list(arguments.program)
    if program[:1] == ["--"]:
        program = program[1:]
    if arguments.steps < 1:
        parser.error(f"--steps must be at least 1, but got: {arguments.steps}")
    if arguments.rtol is not None and arguments.rtol < 0:
        parser.error(f"--rtol must be 0 or more, but got: {arguments.rtol}")
    if arguments.before is not None and arguments.before_python is not None:
        parser.error(
            "--before-python and --before CMD cannot be combined: --before CMD is the whole "
            "command (put the interpreter in it), --before-python runs the REF's code with it"
        )
    if arguments.rtol is None:
        arguments.rtol = RELEASES_RTOL if arguments.before_python is not None else 0.0
    if arguments.module is None and not program:
        parser.error("verify needs a SCRIPT to run (or -m MODULE)")
    cwd = pathlib.Path.cwd()
    if arguments.module is None and not (cwd / program[0]).is_file():
        parser.error(f"no such script: {program[0]!r} (pass a path to a .py file, or -m MODULE)")
    if arguments.plot and (missing := plot.check_plot_available()):
        print(f"{PROG}: error: {missing}", file=sys.stderr)
        return 2
    if progress is None:
        progress = sys.stderr.isatty()
    try:
        with _stopped_by_signals():
            return _verify(arguments, program, cwd, progress)
    except sides.CannotRun as error:
        print(f"verify: could not run: {error}", file=sys.stderr)
        return 2
    except Stopped as stopped:
        print(
            f"verify: stopped ({stopped.how}): both runs ended, the temporary worktree and "
            "folder removed; no verdict",
            file=sys.stderr,
        )
        return 128 + stopped.signal


class Stopped(Exception):
    """SIGTERM (what a CI timeout sends), SIGINT (Ctrl-C) or SIGHUP (the terminal closed)
    reached verify: exit 128 + signal."""

    def __init__(self, number: int) -> None:
        super().__init__(number)
        self.signal = number
        self.how = "Ctrl-C" if number == signal.SIGINT else signal.Signals(number).name


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGTERM, SIGINT and SIGHUP raise `Stopped` (once: the cleanup that follows, the runs
    ended and the worktree and temporary folder removed, is not interrupted again)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers are the main thread's (verify called from a thread: as is)
        return
    # SIGHUP too: the runs are in sessions of their own, which a closed terminal does not reach.
    numbers = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def stop(number: int, frame: object) -> None:
        for each in numbers:
            signal.signal(each, signal.SIG_IGN)
        raise Stopped(number)

    previous = {number: signal.signal(number, stop) for number in numbers}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _verify(
    arguments: argparse.Namespace, program: list[str], cwd: pathlib.Path, progress: bool
) -> int:
    seed = None if arguments.no_seed else arguments.seed
    module = arguments.module
    if module is not None:
        program = ["-m", module, *program]
    with contextlib.ExitStack() as stack:
        folder = pathlib.Path(stack.enter_context(sides.folder()))
        user_path = sides.user_pythonpath(cwd)
        after = sides.Side(
            "after",
            sides.python_command(["trace"], sides.for_side(program, "after"), safe_path=False),
            user_path,
            folder / "after.jsonl",
            folder / "after.log",
            description=f"{sides.shown(program)} in the working tree, through python -m "
            "compat_lso trace",
        )
        about_before: dict[str, Any]
        repository = None
        if arguments.before is not None:
            before = sides.Side(
                "before",
                sides.for_side(shlex.split(arguments.before), "before"),
                user_path,
                folder / "before.jsonl",
                folder / "before.log",
            )
            label = "--before"
            before.description = f"{arguments.before} (--before)"
            about_before = {"command": before.command}
        else:
            repository = sides.repository_root(cwd)
            before, label, about_before = _before_at_ref(
                arguments, program, cwd=cwd, root=repository, folder=folder, stack=stack
            )
        runs = [before, after]
        _header(runs)
        stack.callback(sides.stop, runs)  # however verify ends: no run left behind
        sides.start(runs, cwd, arguments.steps, seed)
        sides.wait(runs, arguments.steps, progress)
        traces = {side.name: trace_file.read(side.trace) for side in runs}
        outcome, rtol = compare.compare_within(traces["before"], traces["after"], arguments.rtol)
        reasons = None
        if outcome.divergence is not None:
            reasons = gather(outcome.divergence, runs, traces, cwd, repository)
        _print(outcome, traces, runs, reasons, label=label, rtol=rtol)
        settings = {"steps": arguments.steps, "rtol": rtol, "seed": seed}
        if arguments.before_python is not None:
            settings["before_python"] = arguments.before_python
        if arguments.json:
            document = report.document(
                outcome,
                {
                    "before": (traces["before"], about_before),
                    "after": (traces["after"], {"command": after.command}),
                },
                reasons,
                settings,
                roots={"before": before.root, "after": repository, "cwd": cwd},
            )
            report.write_json(cwd / arguments.json, document)
        if arguments.plot:
            plot.plot(cwd / arguments.plot, traces["before"], traces["after"], outcome)
        return outcome.exit_status
    raise AssertionError("unreachable")  # pragma: no cover


def _before_at_ref(
    arguments: argparse.Namespace,
    program: list[str],
    *,
    cwd: pathlib.Path,
    root: pathlib.Path,
    folder: pathlib.Path,
    stack: contextlib.ExitStack,
) -> tuple[sides.Side, str, dict[str, Any]]:
    """The before run of the old code at REF (its checkout entered on `stack`), through `run
    --audit`, by this Python or --before-python's; its label in the report, and its JSON."""
    module = arguments.module
    other = None
    if arguments.before_python is not None:
        other = sides.other_python(arguments.before_python, folder)
    ref = arguments.against or "HEAD"
    worktree = stack.enter_context(sides.checkout(root, ref, folder))
    old_program = _at_ref(program, module, cwd=cwd, root=root, worktree=worktree, ref=ref)
    audit_json = folder / "audit.json"
    before = sides.Side(
        "before",
        sides.python_command(
            ["run", "--audit", "--audit-json", str(audit_json)],
            sides.for_side(old_program, "before"),
            safe_path=True,
            python=other.path if other is not None else sys.executable,
        ),
        ([other.home] if other is not None else [])
        + ([sides.map_into(str(cwd), root, worktree)] if module else [])
        + [sides.map_into(p, root, worktree) for p in sides.user_pythonpath(cwd)],
        folder / "before.jsonl",
        folder / "before.log",
        root=worktree,
        audit_json=audit_json,
    )
    python = "python" if other is None else f"{other.path} ({other.tensorflow})"
    before.description = (
        f"{sides.shown(program)} at {ref}, through {python} -m compat_lso run --audit"
    )
    about: dict[str, Any] = {"ref": ref, "command": before.command}
    if other is None:
        return before, ref, about
    about["python"] = other.path
    return before, f"{ref}, {other.tensorflow}", about


def _at_ref(
    program: list[str],
    module: str | None,
    *,
    cwd: pathlib.Path,
    root: pathlib.Path,
    worktree: pathlib.Path,
    ref: str,
) -> list[str]:
    """The program's command line with its script at REF's checkout (a module: as it is)."""
    if module is not None:
        return program
    script = (cwd / program[0]).resolve()
    try:
        relative = script.relative_to(root.resolve())
    except ValueError:
        raise sides.CannotRun(
            f"{program[0]} is outside the git repository {root}; run verify in the repository "
            "that holds it, or pass the old code's command with --before CMD"
        ) from None
    old = worktree / relative
    if not old.is_file():
        raise sides.CannotRun(
            f"{relative.as_posix()} does not exist at {ref}: --against a commit that has it, or "
            "--before CMD"
        )
    return [str(old), *program[1:]]


def _print(
    outcome: compare.Outcome,
    traces: dict[str, trace_file.Trace],
    runs: list[sides.Side],
    reasons: Reasons | None,
    *,
    label: str,
    rtol: float,
) -> None:
    before, after = traces["before"], traces["after"]
    versions = [_versions(t) for t in (before, after)]
    if versions[0] != versions[1] and None not in versions:
        print(f"\nversions: before {versions[0]}; after {versions[1]}")
    if before.steps or after.steps:
        print()
        print(report.table(before, after, outcome.divergence, report.TABLE_ROWS, rtol))
    print()
    print(report.verdict_line(outcome, rtol))
    if outcome.divergence is not None and reasons is not None:
        print(report.divergence_text(outcome.divergence, reasons, label))
    for side, trace in zip(runs, (before, after), strict=True):
        if trace.failed:
            tail = side.tail()
            how = trace.ended_how()  # "ended with exit status N" says it already
            status = "" if "exit status" in how else f"; exit status {side.returncode}"
            print(
                f"\nthe {side.name} run {how}{status}; "
                f"its output ends:\n{_indent(tail) if tail else '  (no output)'}"
            )
    sys.stdout.flush()


def _versions(trace: trace_file.Trace) -> str | None:
    """ "TensorFlow 2.15.1 (tf.keras: keras 2.15.0)", as the trace's start line names them."""
    versions = (trace.start or {}).get("versions") or {}
    if not versions.get("tensorflow"):
        return None
    return f"TensorFlow {versions['tensorflow']} (tf.keras: {versions.get('tf.keras')})"


def _header(runs: list[sides.Side]) -> None:
    """What runs, at once: piped output (a CI log, `| tee`) shows it before the first step."""
    print(f"before: {runs[0].description}")
    print(f"after:  {runs[1].description}", flush=True)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())
