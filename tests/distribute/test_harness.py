"""The scenario harness never lets a hung worker block the suite (no TensorFlow here)."""

from __future__ import annotations

import socket
import sys
import time

from tests.distribute import harness

SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]
FAIL = [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"]
REPORT = [sys.executable, "-c", "print('noise'); print('RESULT {\"ok\": 1}')"]
ENV = harness._environment()


def test_a_failing_worker_gets_its_peer_killed_and_its_stderr_reported():
    start = time.monotonic()
    (result,) = harness._run_groups([[(SLEEP, ENV), (FAIL, ENV)]], timeout_s=60)
    assert time.monotonic() - start < 30
    assert isinstance(result, harness.ScenarioFailed)
    assert str(result).startswith("process 1 exited with 3")
    assert "boom" in str(result)


def test_a_hang_is_killed_at_the_deadline():
    start = time.monotonic()
    (result,) = harness._run_groups([[(SLEEP, ENV), (REPORT, ENV)]], timeout_s=2)
    assert time.monotonic() - start < 30
    assert isinstance(result, harness.ScenarioFailed)
    assert str(result).startswith("timed out after 2 s")


def test_groups_fail_independently_and_results_are_read():
    results = harness._run_groups([[(FAIL, ENV)], [(REPORT, ENV), (REPORT, ENV)]], timeout_s=60)
    assert isinstance(results[0], harness.ScenarioFailed)
    assert results[1] == [{"ok": 1}, {"ok": 1}]


def test_free_ports_are_distinct_and_bindable():
    ports = harness.free_ports(2)
    assert len(set(ports)) == 2
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
