"""Deprecation warnings that point at the user's line, not at ours or Keras's."""

from __future__ import annotations

import sys
import types
import warnings

# Frames in these packages are never the user's line: the warning is raised in compat_lso,
# and on Keras 2 the construction passes through Keras's metaclass and deserializers.
_LIBRARY_PACKAGES = ("compat_lso", "keras", "tf_keras", "tensorflow")


def _is_library_frame(module_name: str) -> bool:
    return module_name.partition(".")[0] in _LIBRARY_PACKAGES


def warn_deprecated(message: str) -> None:
    """Emit one DeprecationWarning attributed to the first caller outside the libraries."""
    frame: types.FrameType | None = sys._getframe(1)
    stacklevel = 2  # 1 would be this function; 2 is its caller, the first frame checked
    while frame is not None and _is_library_frame(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
        stacklevel += 1
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel)
