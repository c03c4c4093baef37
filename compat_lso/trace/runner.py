"""`python -m compat_lso trace SCRIPT|-m MODULE [ARGS]`, and the trace around `run`.

`trace` runs the program as `python SCRIPT` (or `python -m MODULE`) would, with nothing
installed and no name changed, only the trace on: the migrated side of `verify`, whatever the
codemod's target. `run` (the old side) calls `traced()` around the program it runs.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from collections.abc import Callable

from compat_lso import trace

HELP = "run a script or module as python does, tracing each loss scale optimizer step"


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser("trace", help=HELP, description=HELP)
    parser.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=f"the trace file (JSON Lines); the same as {trace.ENVIRONMENT_VARIABLE}=FILE",
    )
    parser.add_argument(
        "--steps",
        metavar="N",
        help="end the program (status 0) once every loss scale optimizer did N steps; the "
        f"same as {trace.STEPS_VARIABLE}=N",
    )
    parser.add_argument(
        "target", nargs=argparse.REMAINDER, help="SCRIPT [ARGS...] (or ARGS for -m)"
    )


def main(parser: argparse.ArgumentParser, arguments: argparse.Namespace) -> int:
    """The `trace` subcommand."""
    module, target = arguments.module, arguments.target
    if module is None and not target:
        parser.error("trace needs a SCRIPT to run (or -m MODULE)")
    if module is None and not os.path.isfile(target[0]):
        parser.error(
            f"trace: no such script: {target[0]!r} (pass a path to a .py file, or -m MODULE)"
        )
    # Through the environment, as `verify` passes them: the program sees what a child would.
    if arguments.output:
        os.environ[trace.ENVIRONMENT_VARIABLE] = arguments.output
    if arguments.steps is not None:
        os.environ[trace.STEPS_VARIABLE] = arguments.steps
    if not trace.requested_by_environment():
        parser.error(
            f"trace needs a file to write: pass -o FILE or set {trace.ENVIRONMENT_VARIABLE}=FILE"
        )
    try:
        trace.enable_from_environment()
    except ValueError as error:
        parser.error(f"trace: {error}")
    trace.forget_environment()
    return traced(lambda: run_program(module, target, like_python=True))


def traced(program: Callable[[], int]) -> int:
    """Run `program` and write the trace's last line: "exit" with its status, or "error"."""
    if not trace.is_enabled():
        if not trace.requested_by_environment():
            return program()
        try:
            trace.enable_from_environment()
        except ValueError as error:
            raise SystemExit(f"python -m compat_lso: {error}") from None
        trace.forget_environment()
    try:
        status = program()
    except SystemExit as exit_:
        code = exit_.code
        trace.finish(code if isinstance(code, int) else 0 if code is None else 1)
        raise
    except BaseException as error:
        trace.finish_with_error(error)
        raise
    trace.finish(status)
    return status


def run_program(module: str | None, target: list[str], like_python: bool) -> int:
    """Run a module (`-m`) or a script as __main__, with sys.argv as python sets it.

    `like_python`: sys.path[0] is the script's directory (python SCRIPT) or the current one
    (python -m), in place of this runner's; else it is put in front, as `run` does.
    """
    if module is not None:
        sys.argv = [module, *target]
        _path_first(os.getcwd(), like_python)
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    script, *script_arguments = target
    sys.argv = [script, *script_arguments]
    _path_first(os.path.dirname(os.path.abspath(script)), like_python)
    runpy.run_path(script, run_name="__main__")
    return 0


def _path_first(directory: str, replace: bool) -> None:
    if replace and sys.path:
        sys.path[0] = directory
    else:
        sys.path.insert(0, directory)
