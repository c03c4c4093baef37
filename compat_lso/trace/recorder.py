"""The trace file and the per-optimizer state: one JSON line per record, flushed at once.

No TensorFlow here: the values arrive as numbers (numpy scalars and arrays) from
`trace/measure.py`, eagerly or from inside a graph through `tf.numpy_function`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import platform
import sys
import sysconfig
import threading
from collections.abc import Callable
from typing import Any, TextIO


@dataclasses.dataclass
class OptimizerState:
    """What the trace keeps per loss scale optimizer (not the optimizer: no reference to it)."""

    index: int  # order of creation in the process, 0-based
    class_name: str  # "module.QualName"
    # "keras3", "keras2" (a loss scale optimizer) or "factor" (a Keras 3 optimizer given
    # loss_scale_factor): which step method and which scale to read
    generation: str
    steps: int = 0  # apply_gradients calls recorded so far
    alive: Callable[[], object] = lambda: True  # a weak reference to the optimizer
    created: str = ""  # "path:line": the user's line that created it
    # thread -> the losses scaled through it since its last step, in order
    pending_losses: dict[int, list[Any]] = dataclasses.field(default_factory=dict)


class Recorder:
    def __init__(self, path: str, steps: int | None, argv: list[str]) -> None:
        self.path = path
        self.steps = steps
        self.lock = threading.Lock()
        self.optimizers: list[OptimizerState] = []
        self.finished = False
        # Line-buffered, and flushed after each record: a process killed mid-run leaves every
        # record written so far.
        self.file: TextIO = open(path, "w", encoding="utf-8", buffering=1)  # noqa: SIM115
        self._write({"event": "start", "versions": versions(), "argv": argv, "steps": steps})

    def _write(self, record: dict[str, Any]) -> None:
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()

    def register(self, class_name: str, generation: str) -> OptimizerState:
        with self.lock:
            state = OptimizerState(len(self.optimizers), class_name, generation)
            self.optimizers.append(state)
            return state

    def forget(self, state: OptimizerState) -> None:
        """Drop an optimizer that never stepped (a plain one a LossScaleOptimizer now wraps);
        those registered after it, none of which stepped yet, move up one."""
        with self.lock:
            at = self.optimizers.index(state)
            if any(s.steps for s in self.optimizers[at:]):
                return  # numbers already written stay; it counts as done (see _done)
            del self.optimizers[at]
            for index, later in enumerate(self.optimizers[at:], start=at):
                later.index = index

    def step(self, state: OptimizerState, where: str, values: dict[str, Any]) -> None:
        """One step of `state`'s optimizer; ends the process once every optimizer did N."""
        with self.lock:
            if self.finished:
                return
            state.steps += 1
            self._write(
                {
                    "event": "step",
                    "optimizer": state.index,
                    "class": state.class_name,
                    "step": state.steps,
                    "where": where,
                    **values,
                }
            )
            if self.steps is not None and all(self._done(s) for s in self.optimizers):
                self._stop()

    def _done(self, state: OptimizerState) -> bool:
        # An optimizer collected before its N steps (a model compiled again) will do no more.
        # So is a plain optimizer whose loss_scale_factor was switched off (it scales no more).
        optimizer = state.alive()
        return self.steps is not None and (
            state.steps >= self.steps
            or optimizer is None
            or (state.generation == "factor" and vars(optimizer).get("loss_scale_factor") is None)
        )

    def _stop(self) -> None:
        self._write({"event": "modules", "files": project_modules()})
        self._write({"event": "stopped", "reason": "steps", "steps": self.steps})
        self.finished = True
        self.file.close()
        # os._exit skips atexit: the audit of `run --audit` (verify's before run) is written now.
        from compat_lso import audit

        audit.finish()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # closed or broken: nothing to save
                stream.flush()
        os._exit(0)

    def finish(self, record: dict[str, Any]) -> None:
        """The last line ("exit" or "error"), once; later steps are not recorded."""
        with self.lock:
            if self.finished:
                return
            self.finished = True
            self._write({"event": "modules", "files": project_modules()})
            self._write(record)
            self.file.close()


def project_modules() -> list[str]:
    """The files of the modules this process imported that are neither Python's nor an
    installed package's (site-packages) nor compat_lso's: the user's own (the script, its
    modules), and any package installed from a folder of its own (`verify` keeps those under
    the project's root). Sorted."""
    library = {
        os.path.join(os.path.realpath(path), "")
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if (path := sysconfig.get_paths().get(key))
    }
    library.add(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), ""))
    found = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.endswith(".py"):
            continue
        if "__autograph_generated_file" in file:  # AutoGraph's conversions of the user's code
            continue
        path = os.path.realpath(file)
        if not path.startswith(tuple(library)):
            found.add(path)
    return sorted(found)


def versions() -> dict[str, str | None]:
    """Read from the installed distributions: nothing is imported (TensorFlow may not be yet)."""
    tensorflow = _version("tensorflow", "tensorflow-cpu", "tf-nightly")
    keras = _version("keras")
    tf_keras = _version("tf-keras")
    legacy = os.environ.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1")
    if tensorflow is None:
        behind = None
    elif legacy and _at_least(tensorflow, 2, 16) and tf_keras is not None:
        behind = f"tf_keras {tf_keras}"  # TensorFlow's own rule (tensorflow/__init__.py)
    else:
        behind = None if keras is None else f"keras {keras}"
    return {
        "python": platform.python_version(),
        "tensorflow": tensorflow,
        "keras": keras,
        "tf.keras": behind,
    }


def _version(*distributions: str) -> str | None:
    import importlib.metadata  # here: `python -m compat_lso run` imports this module untraced

    for name in distributions:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _at_least(version: str, major: int, minor: int) -> bool:
    parts = version.split(".")
    try:
        return (int(parts[0]), int(parts[1])) >= (major, minor)
    except (IndexError, ValueError):
        return True
