"""Hypothesis profiles for the codemod's property tests.

The everyday suite runs each property with the small count written on the test. The dedicated
fuzz job (`nox -s fuzz`, or
`HYPOTHESIS_PROFILE=fuzz pytest tests/codemods/test_codemod_properties.py`) loads the `fuzz`
profile: 10,000 examples per property, no deadline, no example database (every run explores
afresh; a failure prints the reproducing `@reproduce_failure` blob instead).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fuzz",
    max_examples=10_000,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# CI (.ci/run exports HYPOTHESIS_DERANDOMIZE=1): the everyday counts, drawn from a fixed seed, so
# that CI's verdict is the code's and not the draw's. Local runs draw afresh (a failure found there
# is kept in .hypothesis/ and replayed), and the fuzz job explores 10,000 a property.
settings.register_profile("derandomized", derandomize=True, database=None)

PROFILE = os.environ.get("HYPOTHESIS_PROFILE")
if PROFILE:
    settings.load_profile(PROFILE)
elif os.environ.get("HYPOTHESIS_DERANDOMIZE"):
    settings.load_profile("derandomized")

# The forms of real files (tests/codemods/forms/README.md): data the codemod runs on, never
# collected as tests.
collect_ignore = ["forms"]
