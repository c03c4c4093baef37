"""The step trace: one JSON line per loss scale optimizer step, to compare two runs of a program.

`python -m compat_lso verify` runs the old program (`python -m compat_lso run`) and the migrated
one (`python -m compat_lso trace`) with the trace on and compares the two files. Enabled by
`COMPAT_LSO_TRACE=FILE` (and `COMPAT_LSO_TRACE_STEPS=N`: end the process once every loss scale
optimizer did N steps) under either runner, or by `enable(path, steps)`. The file, line by line:

    {"event": "start", "versions": {...}, "argv": [...], "steps": N | null}
    {"event": "step", "optimizer": K, "class": "module.QualName", "step": S, "where": "file:line",
     "scale_before": x, "scale_after": x, "applied": bool, "iterations": n, "loss": x | null,
     "digest": [[variable name, sum of squares, "fingerprint of its bytes"], ...]}
    ...
    {"event": "stopped", "reason": "steps", "steps": N} | {"event": "exit", "status": code}
        | {"event": "error", "type": "...", "message": "..."}

docs/verify.md ("The trace") says what each value is. Every loss scale optimizer class is
traced: Keras 3's own, Keras 2's and tf_keras's (and their experimental class), compat_lso's, and
subclasses of any of them (`trace/hooks.py`). Off, nothing is imported or patched.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from types import TracebackType

from compat_lso.trace.recorder import Recorder

__all__ = [
    "ENVIRONMENT_VARIABLE",
    "STEPS_VARIABLE",
    "enable",
    "enable_from_environment",
    "finish",
    "forget_environment",
    "is_enabled",
    "requested_by_environment",
]

ENVIRONMENT_VARIABLE = "COMPAT_LSO_TRACE"
STEPS_VARIABLE = "COMPAT_LSO_TRACE_STEPS"

_lock = threading.Lock()


class _State:
    recorder: Recorder | None = None


_state = _State()


def enable(path: str | os.PathLike[str], steps: int | None = None) -> None:
    """Trace every loss scale optimizer step of this process into `path` (JSON Lines).

    `steps`: once every loss scale optimizer created so far did this many steps (or was
    garbage-collected: a model compiled again drops its first one), write the "stopped" line
    and end the process with status 0. Call it before the program trains (before
    or after importing TensorFlow). A second call is an error.
    """
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise ValueError(f"steps must be a positive int or None, but got: {steps!r}")
    with _lock:
        if _state.recorder is not None:
            raise RuntimeError(
                f"the trace is already on (writing {_state.recorder.path}); enable it once"
            )
        recorder = Recorder(os.fspath(path), steps, list(sys.argv))
        _state.recorder = recorder
    from compat_lso.trace import hooks

    hooks.attach(recorder)
    atexit.register(_at_exit)
    previous = sys.excepthook

    def excepthook(
        kind: type[BaseException], error: BaseException, traceback: TracebackType | None
    ) -> None:
        finish_with_error(error)
        previous(kind, error, traceback)

    sys.excepthook = excepthook


def is_enabled() -> bool:
    return _state.recorder is not None


def requested_by_environment() -> bool:
    return bool(os.environ.get(ENVIRONMENT_VARIABLE, "").strip())


def enable_from_environment() -> None:
    """`enable()` with `COMPAT_LSO_TRACE` and `COMPAT_LSO_TRACE_STEPS`; a bad value is an error
    naming the variable."""
    path = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not path:
        raise ValueError(f"{ENVIRONMENT_VARIABLE} is not set: set it to the trace file's path")
    raw = os.environ.get(STEPS_VARIABLE, "").strip()
    steps = None
    if raw:
        try:
            steps = int(raw)
        except ValueError:
            steps = 0
        if steps < 1:
            raise ValueError(
                f"{STEPS_VARIABLE} must be a positive whole number of steps, but got: {raw!r}; "
                "unset it to trace the whole run"
            )
    enable(path, steps)


def forget_environment() -> None:
    """Unset the variables once this process traces: a child process that honours them (a
    `python -m compat_lso run` it starts) would otherwise truncate and rewrite this file."""
    os.environ.pop(ENVIRONMENT_VARIABLE, None)
    os.environ.pop(STEPS_VARIABLE, None)


def finish(status: int) -> None:
    """Write the "exit" line (the runners call it with the program's exit status)."""
    if _state.recorder is not None:
        _state.recorder.finish({"event": "exit", "status": status})


def finish_with_error(error: BaseException) -> None:
    """Write the "error" line for an uncaught exception."""
    if _state.recorder is not None:
        _state.recorder.finish({"event": "error", "type": _type_name(error), "message": str(error)})


def _at_exit() -> None:
    finish(0)  # a program that called enable() itself and exited normally


def _type_name(error: BaseException) -> str:
    kind = type(error)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"
