"""The adapter that runs upstream's own tests against compat_lso: `nox -s upstream_tests`.

Keras 2.8's and tf-keras's loss scale optimizer, policy and graph rewrite test files are read
from local checkouts at their tags (`sources.py`), given the names the backend under test means
(`support.py`), and run with the expected differences as markers (`expectations.py`, through
`plugin.py`). Nothing here is collected by the suite: it holds no test files. docs/shim.md,
"Upstream's tests", says how to get the checkouts.
"""
