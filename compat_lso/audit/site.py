"""Where the user's code is: the innermost frame outside compat_lso, TensorFlow, Keras and the
standard library (the audit's records and the trace's `where` name that line)."""

from __future__ import annotations

import functools
import os
import sys
import sysconfig


def user_site() -> tuple[str, int]:
    """The innermost frame outside compat_lso, TensorFlow, Keras and the standard library.

    TensorFlow's own stack extraction maps AutoGraph's generated code back to the user's lines
    (what its error messages show), so a record made while tracing names the line written.
    """
    for frame in reversed(_stack()):
        if not is_library(frame[0]):
            return frame
    return ("<unknown>", 0)


def accessing_site() -> tuple[str, int] | None:
    """The frame that made the access a hook intercepted (the innermost outside the audit and
    AutoGraph's call machinery) if it is the user's; None where compat_lso, TensorFlow, Keras or
    the standard library made it."""
    for frame in reversed(_stack()):
        if not _is_audit_machinery(frame[0]):
            return None if is_library(frame[0]) else frame
    return None


# This folder (the audit's own frames) and compat_lso/ above it (the library's).
_AUDIT = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=4096)
def _is_audit_machinery(filename: str) -> bool:
    from tensorflow.python import autograph  # its converted_call: TF 2.0+, every supported release

    path = os.path.abspath(filename)
    return path.startswith((_AUDIT + os.sep, os.path.dirname(autograph.__file__) + os.sep))


def _stack() -> list[tuple[str, int]]:
    # What TensorFlow's errors use to name user lines (TF 2.2+: every supported release).
    from tensorflow.python.util import tf_stack

    return [(f.filename, f.lineno) for f in tf_stack.extract_stack()]


@functools.cache
def _library_roots() -> tuple[str, ...]:
    roots = [os.path.dirname(_AUDIT), sysconfig.get_paths()["stdlib"]]
    for name in ("tensorflow", "keras", "tf_keras"):
        file = getattr(sys.modules.get(name), "__file__", None)
        if file:
            roots.append(os.path.dirname(os.path.abspath(file)))
    return tuple(root + os.sep for root in roots)


@functools.lru_cache(maxsize=4096)
def is_library(filename: str) -> bool:
    if filename.startswith("<") or "__autograph_generated_file" in filename:
        return True
    return os.path.abspath(filename).startswith(_library_roots())
