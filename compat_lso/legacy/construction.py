"""Whether compat_lso itself is constructing an old class, which then does not warn.

The TF 2.1-2.3 classes warn once per construction the user wrote. `Model.compile` wrapping for a
Policy, `set_policy("name")` building a Policy, `from_config`: the user did not write those.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any

from compat_lso.core.deprecation import warn_deprecated

# Set while compat_lso itself constructs an old class (compile wrapping for a Policy, a policy
# for set_policy("name")): the user did not write that construction, so it does not warn.
_internal_construction = contextvars.ContextVar("_internal_construction", default=False)


@contextlib.contextmanager
def _constructed_by_compat_lso() -> Any:
    token = _internal_construction.set(True)
    try:
        yield
    finally:
        _internal_construction.reset(token)


def _warn_unless_internal(message: str) -> None:
    if not _internal_construction.get():
        warn_deprecated(message)
