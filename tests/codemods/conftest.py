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

PROFILE = os.environ.get("HYPOTHESIS_PROFILE")
if PROFILE:
    settings.load_profile(PROFILE)

# Real files copied for the corpus test (tests/codemods/corpus/PROVENANCE): data, never collected
# (some are named *_test.py in their own projects).
collect_ignore = ["corpus"]
