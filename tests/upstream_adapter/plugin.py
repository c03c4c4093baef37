"""The pytest plugin `nox -s upstream_tests` runs upstream's test files with
(`-p tests.upstream_adapter.plugin`): upstream's tests run as upstream runs them, one process per
file's worth of global state.

- Each expected skip or failure in `expectations.py` becomes a marker on the tests it names
  (`pytest --runxfail` runs the expected failures as plain tests, to count them).
- The global dtype policy and the graph rewrite are put back after every test: upstream runs
  each file in a process of its own, and a test that fails half-way must not fail the next.
- `tf.test.TestCase.test_session` is a context manager, not a test (absl never runs it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import tensorflow as tf

from tests.upstream_adapter import expectations, sources, support

_GENERATED = {test_file.generated for test_file in sources.TEST_FILES}


def _upstream(item: pytest.Item) -> bool:
    return item.path.name in _GENERATED


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = [item for item in items if not (_upstream(item) and item.name == "test_session")]
    for item in filter(_upstream, items):
        for marker in expectations.markers_for(item.nodeid):
            item.add_marker(marker)


@pytest.fixture(autouse=True)
def _restore_global_state() -> Iterator[None]:
    policy = tf.keras.mixed_precision.global_policy()
    yield
    support.disable_mixed_precision_graph_rewrite()
    tf.keras.mixed_precision.set_global_policy(policy)
