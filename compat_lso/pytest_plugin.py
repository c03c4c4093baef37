"""pytest plugin: the `assert_config_equivalent` fixture.

Installed with compat-lso through the `pytest11` entry point, so a test only names the fixture:

    def test_migration_keeps_the_optimizer(assert_config_equivalent):
        assert_config_equivalent(old_optimizer, new_optimizer)

Importing this module is cheap (no TensorFlow, no deepdiff): pytest loads it in every session.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from compat_lso import testing


@pytest.fixture
def assert_config_equivalent() -> Callable[..., None]:
    """`compat_lso.testing.assert_config_equivalent(first, second, *, msg=None)`."""
    return testing.assert_config_equivalent
