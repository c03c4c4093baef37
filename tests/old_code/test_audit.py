"""The runtime audit names, at the user's own line, where Keras 3's own class would differ.

Each script in scripts/audit/ marks the lines where a record is expected with a comment
`# audit: KIND [SUBJECT] xCOUNT, ...`, the counts worked out by hand from the script (steps, inf
gradients, scale 1 at the floor, 2**127 at the cap). The scripts run in this process after
`compat_lso.install(audit=True)`, but for the MirroredStrategy one, which configures devices and
runs through `python -m compat_lso run --audit-json` in a subprocess; the records must be
exactly the marked ones. On Keras 2 backends the native
class is the meaning: nothing is audited, and the summary says so.
"""

from __future__ import annotations

import json
import pathlib
import re
import runpy
import subprocess
import sys

import pytest
import tensorflow as tf

import compat_lso
from compat_lso import _audit_hooks, audit
from tests.old_code import harness
from tests.shim.backend import IS_KERAS_2, IS_KERAS_3

SCRIPTS = pathlib.Path(__file__).parent / "scripts" / "audit"
_MARKER = re.compile(r"#\s*audit:\s*(.+)$")
_ENTRY = re.compile(r"^(?P<kind>[\w-]+)(?: (?P<subject>[\w()]+))? x(?P<count>\d+)$")

keras3_only = pytest.mark.skipif(
    IS_KERAS_2, reason="Keras 2's native class already has TF 2.4's meaning: nothing to audit"
)


def expected_records(script: pathlib.Path) -> list[tuple[str, str | None, str, int, int]]:
    """(kind, subject, file, line, count) for each `# audit:` marker of `script`."""
    expected = []
    for number, text in enumerate(script.read_text().splitlines(), start=1):
        marker = _MARKER.search(text)
        if marker is None:
            continue
        for entry in marker.group(1).split(","):
            parsed = _ENTRY.match(entry.strip())
            assert parsed is not None, f"{script.name}:{number}: bad marker {entry!r}"
            expected.append(
                (
                    parsed["kind"],
                    parsed["subject"],
                    str(script),
                    number,
                    int(parsed["count"]),
                )
            )
    return sorted(expected, key=lambda e: (e[3], e[0]))


def _as_tuples(found: list[dict]) -> list[tuple[str, str | None, str, int, int]]:
    return sorted(
        ((r["kind"], r["subject"], r["file"], r["line"], r["count"]) for r in found),
        key=lambda e: (e[3], e[0]),
    )


@pytest.fixture
def audited(monkeypatch):
    monkeypatch.delenv("COMPAT_LSO_KEEP_NATIVE", raising=False)
    compat_lso.install(audit=True)
    yield
    audit.disable()
    compat_lso.uninstall()
    tf.keras.mixed_precision.set_global_policy("float32")


def _run_in_process(script: pathlib.Path) -> None:
    runpy.run_path(str(script), run_name="__main__")


@keras3_only
@pytest.mark.parametrize(
    "script",
    ["wrap_only_loop.py", "manual_scaling.py", "fixed_and_overflow.py", "fit_with_an_overflow.py"],
)
def test_install_audit_records_each_divergence_at_the_users_line(audited, script):
    path = SCRIPTS / script
    _run_in_process(path)
    assert _as_tuples(audit.records()) == expected_records(path)


@keras3_only
def test_the_audit_does_not_change_what_the_script_computes(monkeypatch, capsys):
    monkeypatch.delenv("COMPAT_LSO_KEEP_NATIVE", raising=False)
    results = []
    for turn_on in (False, True):
        compat_lso.install(audit=turn_on)
        try:
            for script in ("manual_scaling.py", "fixed_and_overflow.py"):
                _run_in_process(SCRIPTS / script)
        finally:
            audit.disable()
            compat_lso.uninstall()
        results.append(capsys.readouterr().out)
    assert results[0] == results[1]
    assert "RESULT" in results[0]


@keras3_only
def test_the_summary_names_file_line_kind_and_count(audited, capsys):
    path = SCRIPTS / "wrap_only_loop.py"
    _run_in_process(path)
    (line,) = [e[3] for e in expected_records(path)]
    text = audit.summary()
    assert f"{path.name}:{line}: unscaled-gradients (x3): " in text
    assert "would divide them by the loss scale" in text


@keras3_only
def test_off_the_shims_class_is_untouched_and_its_step_has_the_same_operations():
    from compat_lso.keras3 import optimizer as _keras3

    cls = _keras3.LossScaleOptimizer
    before = {name: cls.__dict__.get(name) for name in _audit_hooks.AUDITED}

    def traced_operations() -> int:
        var = tf.Variable(1.0)
        opt = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = opt.get_scaled_loss(var * 2.0)
            grads = opt.get_unscaled_gradients(tape.gradient(loss, [var]))
            opt.apply_gradients(zip(grads, [var], strict=True))

        step()
        graph = step.get_concrete_function().graph.as_graph_def()
        return len(graph.node) + sum(len(f.node_def) for f in graph.library.function)

    off = traced_operations()
    audit.enable()
    try:
        assert cls.__dict__.get("apply_gradients") is not before["apply_gradients"]
        on = traced_operations()
    finally:
        audit.disable()
    assert {name: cls.__dict__.get(name) for name in _audit_hooks.AUDITED} == before
    assert traced_operations() == off
    assert on > off  # the counting is really in the traced step while on


@keras3_only
def test_record_is_the_hook_for_other_modules(audited):
    audit.record("keras2-form", "variables()")  # the line the record must name
    (found,) = audit.records()
    assert (found["file"], found["line"]) == (__file__, _line_of('audit.record("keras2-form"'))
    assert "opt.variables (a list" in found["message"]
    with pytest.raises(ValueError, match="kind must be one of"):
        audit.record("no-such-kind")


def _line_of(text: str) -> int:
    lines = pathlib.Path(__file__).read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


@pytest.mark.skipif(IS_KERAS_3, reason="Keras 3 is audited; tested above")
def test_on_keras_2_the_summary_says_nothing_was_audited(audited):
    _run_in_process(SCRIPTS / "manual_scaling.py")
    assert audit.records() == []
    assert "this run was on Keras 2" in audit.summary()


def test_run_audit_prints_the_summary_and_writes_json(tmp_path):
    """The one subprocess: `python -m compat_lso run --audit-json FILE SCRIPT`, on a script that
    configures devices after `import tensorflow` (which an audit that started TensorFlow's
    runtime early would break) and trains under MirroredStrategy."""
    script = SCRIPTS / "mirrored_wrap_only.py"
    output = tmp_path / "audit.json"
    completed = subprocess.run(
        [sys.executable, "-m", "compat_lso", "run", "--audit-json", str(output), str(script)],
        capture_output=True,
        text=True,
        env=harness.environment(),
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    document = json.loads(output.read_text())
    if IS_KERAS_2:
        assert document["records"] == []
        assert "this run was on Keras 2" in completed.stderr
        return
    assert _as_tuples(document["records"]) == expected_records(script)
    line = expected_records(script)[0][3]
    assert f"{script.name}:{line}: unscaled-gradients (x6): " in completed.stderr
