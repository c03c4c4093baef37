"""`python -m compat_lso`: run old code unmodified, and manage the start-up hook.

python -m compat_lso run SCRIPT [ARGS...]      run a script with the old names installed
python -m compat_lso run -m MODULE [ARGS...]   the same for a module
python -m compat_lso run --keep-native ...     the same, leaving Keras 3's own LossScaleOptimizer
    (for code already written for Keras 3; sets COMPAT_LSO_KEEP_NATIVE=1 for the process)
python -m compat_lso run --audit [--audit-json FILE] SCRIPT ...
    the same, and at exit a summary (stderr; FILE: JSON) of each place where Keras 3's own
    LossScaleOptimizer would have trained differently in this run (see compat_lso.audit)
python -m compat_lso trace SCRIPT|-m MODULE [ARGS...]
    run it as python would (nothing installed), writing a trace of each loss scale optimizer
    step to $COMPAT_LSO_TRACE (see compat_lso.trace; `run` honours the variable too)
python -m compat_lso check-config A B         compare two saved LossScaleOptimizer configs
python -m compat_lso verify [--steps N] [--against REF | --before CMD] SCRIPT [ARGS...]
    train the old code (git's REF, default HEAD, through `run`) and the working tree for N
    steps each, and compare them step by step (compat_lso/verify, docs/verify.md)
python -m compat_lso autoinstall enable|disable|status
    a start-up hook in this environment: with COMPAT_LSO_INSTALL=1 set, every Python
    process installs the names right after it imports TensorFlow, with no command change
"""

from __future__ import annotations

import argparse
import os
import pathlib
import runpy
import sys
import sysconfig

from compat_lso import audit
from compat_lso.installer import startup as _startup
from compat_lso.testing import check_config as _check_config
from compat_lso.trace import runner as _trace
from compat_lso.verify import seed as _seed

PTH_NAME = "compat_lso_autoinstall.pth"
# One line, as .pth files require; it costs nothing unless the variable is set.
PTH_LINE = (
    "import os; os.environ.get('COMPAT_LSO_INSTALL', '').strip().lower() not in "
    "('', '0', 'false', 'no') and __import__('compat_lso.installer.startup', fromlist=['_'])"
    ".install_when_tensorflow_is_imported()\n"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m compat_lso", description=__doc__.split("\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run a script or module with the old names installed")
    run.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m does")
    run.add_argument(
        "--keep-native",
        action="store_true",
        help="on Keras 3, leave tf.keras.mixed_precision.LossScaleOptimizer as Keras 3 has it "
        "(code already written for Keras 3); the same as COMPAT_LSO_KEEP_NATIVE=1",
    )
    run.add_argument(
        "--audit",
        action="store_true",
        help="at exit, print where Keras 3's own LossScaleOptimizer would have trained "
        "differently in this run (user file:line, kind, count)",
    )
    run.add_argument(
        "--audit-json", metavar="FILE", help="with --audit (implied): also write it as JSON to FILE"
    )
    run.add_argument("target", nargs=argparse.REMAINDER, help="SCRIPT [ARGS...] (or ARGS for -m)")

    _trace.add_parser(commands)

    check = commands.add_parser(
        "check-config", add_help=False, help="compare the LossScaleOptimizer configs in two files"
    )
    check.add_argument("rest", nargs=argparse.REMAINDER)

    verify = commands.add_parser(
        "verify", add_help=False, help="compare the old code's training with the migrated code's"
    )
    verify.add_argument("rest", nargs=argparse.REMAINDER)

    auto = commands.add_parser("autoinstall", help="the COMPAT_LSO_INSTALL start-up hook")
    auto.add_argument("action", choices=["enable", "disable", "status"])

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["verify"]:  # its own parser: options before SCRIPT are verify's
        from compat_lso.verify import cli as _verify

        return _verify.main(argv[1:])
    arguments = parser.parse_args(argv)
    _seed.from_environment()  # verify's runs: seeded right after TensorFlow's import
    if arguments.command == "run":
        if arguments.audit or arguments.audit_json:
            audit.request(json_path=arguments.audit_json)
        try:
            return _trace.traced(
                lambda: _run(parser, arguments.module, arguments.target, arguments.keep_native)
            )
        finally:
            audit.finish()
    if arguments.command == "trace":
        return _trace.main(parser, arguments)
    if arguments.command == "check-config":
        return _check_config.main(arguments.rest, prog="python -m compat_lso check-config")
    return _autoinstall(arguments.action)


def _run(
    parser: argparse.ArgumentParser, module: str | None, target: list[str], keep_native: bool
) -> int:
    if module is None and not target:
        parser.error("run needs a SCRIPT to run (or -m MODULE)")
    if module is None and not os.path.isfile(target[0]):
        parser.error(
            f"run: no such script: {target[0]!r} (pass a path to a .py file, or -m MODULE)"
        )
    if keep_native:
        # Through the environment, so that the script's own install() calls and its
        # subprocesses (with the start-up hook) make the same choice.
        os.environ[_startup.KEEP_NATIVE_VARIABLE] = "1"
    _startup.install_when_tensorflow_is_imported()
    if module is not None:
        sys.argv = [module, *target]
        if not sys.flags.safe_path:  # python -P -m: no working directory in front, as python
            sys.path.insert(0, os.getcwd())
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    script, *script_arguments = target
    sys.argv = [script, *script_arguments]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


def _pth_path() -> pathlib.Path:
    return pathlib.Path(sysconfig.get_paths()["purelib"]) / PTH_NAME


def _autoinstall(action: str) -> int:
    path = _pth_path()
    if action == "enable":
        path.write_text(PTH_LINE)
        print(
            f"wrote {path}; set {_startup.ENVIRONMENT_VARIABLE}=1 to install the names at start-up"
        )
    elif action == "disable":
        if path.exists():
            path.unlink()
        print(f"removed {path}")
    else:
        state = "enabled" if path.exists() else "disabled"
        variable = "set" if _startup.requested_by_environment() else "not set"
        print(f"start-up hook {state} ({path}); {_startup.ENVIRONMENT_VARIABLE} is {variable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
