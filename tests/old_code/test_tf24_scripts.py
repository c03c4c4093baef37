"""TF 2.4-2.15 scripts give TF 2.15's numbers, bit for bit, on every backend.

scripts/tf24/ holds code written against the non-experimental
`tf.keras.mixed_precision.LossScaleOptimizer` as TF 2.4-2.15 code was: positional arguments, a
fixed scale, the manual `get_scaled_loss` / `get_unscaled_gradients` pattern in `tf.function`,
a dynamic trajectory with inf and nan gradients, `Model.fit` under `mixed_float16` with and
without an explicit optimizer, reads of `loss_scale`, `dynamic_counter` and `dynamic`.

The reference, references/tf24.tf215.json, is what they reported running natively on TF 2.15
(Keras 2's own classes, no compat_lso), written by `nox -s "record(tf215)"`; the file names the
command and versions. They run in fresh processes, one per way of running them, together with
test_run_unmodified.py's scripts (shared_runs.py).
"""

from __future__ import annotations

import itertools
import json
import pathlib
import re
from typing import Any

import pytest
from packaging.version import Version

from codemods.apply.engine import migrate
from compat_lso import _backend
from tests.old_code import harness, record, shared_runs
from tests.shim.backend import IS_KERAS_3

TESTS = shared_runs.TESTS
REFERENCE_FILE = shared_runs.TF24_REFERENCE_FILE
REFERENCE = shared_runs.TF24_REFERENCE
SCRIPTS = sorted(REFERENCE)
ONE_SCRIPT = shared_runs.TF24_ONE.relative_to(TESTS).as_posix()
# Its only loss scale optimizer is the one `compile()` adds under mixed_float16: no code to
# migrate, so TF 2.15's meaning comes from `run`'s compile wrapping alone.
NOTHING_TO_MIGRATE = {"old_code/scripts/tf24/fit_auto.py"}


def _result(script: str, mode: str) -> dict[str, Any]:
    return shared_runs.result(TESTS / script, mode)


def _id(script: str) -> str:
    return pathlib.Path(script).stem


def test_the_reference_was_recorded_natively_on_tf215():
    reference = json.loads(REFERENCE_FILE.read_text())
    assert reference["command"] == 'nox -s "record(tf215)"'
    assert reference["mode"] == "native"
    assert reference["versions"]["tensorflow"] == "2.15.1"
    assert reference["versions"]["keras"].startswith("2.15")
    scripts = record.scripts_in([str(TESTS / "old_code" / "scripts" / "tf24")])
    assert set(REFERENCE) == {f"old_code/scripts/tf24/{path.name}" for path in scripts}


@pytest.mark.parametrize("script", SCRIPTS, ids=_id)
def test_run_gives_tf215_numbers(script):
    assert _result(script, "run") == REFERENCE[script]


def test_startup_hook_gives_tf215_numbers():
    # The hook after test_run_unmodified.py's script (which imported TensorFlow, and so installed
    # the shim, before this one ran). install() first in a fresh process: test_command_forms.py.
    assert _result(ONE_SCRIPT, "startup-hook") == REFERENCE[ONE_SCRIPT]


@pytest.mark.skipif(IS_KERAS_3, reason="on Keras 3 the native class has another meaning")
@pytest.mark.parametrize("script", SCRIPTS, ids=_id)
def test_keras_2_native_run_gives_tf215_numbers(script):
    # On TF 2.15 this is the recorder's own run again: the reference is reproducible. With
    # tf_keras, Keras 2's class on TF 2.21's kernels.
    assert _result(script, "native") == REFERENCE[script]


@pytest.mark.parametrize(
    "script", [script for script in SCRIPTS if script not in NOTHING_TO_MIGRATE], ids=_id
)
def test_migrated_to_the_shim_gives_tf215_numbers(script):
    assert _result(script, "migrate-shim") == REFERENCE[script]


def _is_training_call(line: str) -> bool:
    # compile() too, as in test_patterns.py: where compile() wraps in Keras 3's class, LSO022's
    # note there says its rule (fit_auto.py: skipped steps not in `iterations`).
    return re.search(r"\b(apply_gradients|minimize|fit|train_on_batch|compile)\(", line) is not None


def _skipped_steps(result: dict[str, Any]) -> list[bool]:
    """Per step, whether TF 2.15 skipped it: the scale after it is lower than the one it used."""
    if "scales_used" in result:
        pairs = zip(result["scales_used"], result["scales"], strict=True)
        return [after < used for used, after in pairs]
    scales = result["scales"]  # after each step; the first step ran at the initial scale
    return [False] + [after < before for before, after in itertools.pairwise(scales)]


def _under_keras_3s_rule(reference: dict[str, Any]) -> dict[str, Any]:
    """TF 2.15's numbers as Keras 3's own class gives them where its rule differs by design
    (docs/migration.md): a skipped step does not advance `iterations`. No scale here reaches the
    floor at 1 or overflows when doubled, so scales, counters, losses and weights are TF 2.15's."""
    expected = dict(reference)
    not_skipped = [not skipped for skipped in _skipped_steps(reference)]
    if _backend.keras_version() < Version("3.9"):
        # Keras 3.0-3.8's own class has an `iterations` of its own that nothing advances
        # (keras-team/keras#20901, docs/migration.md): it stays 0.
        not_skipped = [False] * len(not_skipped)
    if isinstance(reference["iterations"], list):
        expected["iterations"] = list(itertools.accumulate(not_skipped))
    else:
        expected["iterations"] = sum(not_skipped)
    assert expected["iterations"] != reference["iterations"], "no skipped step: nothing tested"
    return expected


@pytest.mark.skipif(not IS_KERAS_3, reason="--target keras3 output is for Keras 3's tf.keras")
@pytest.mark.parametrize("script", SCRIPTS, ids=_id)
def test_migrated_to_keras3_runs_with_keras_3s_rule_or_fails_only_where_reported(script):
    # Without the shim: what the codemod rewrote runs on Keras 3's own class; what it could not
    # rewrite is reported, and the script may fail only at a line with a finding.
    path = TESTS / script
    findings = migrate(path.read_text(), "keras3").findings
    reported = {f.line for f in findings if not f.fixed}
    try:
        result = _result(script, "migrate-keras3")
    except harness.ScriptFailed as failure:
        assert reported, f"fails with nothing reported: {failure}"
        frames = re.findall(rf'copy/{path.name}", line \d+, in .*\n\s+(.+)\n', str(failure))
        assert frames, f"no frame of {path.name} in: {failure}"
        # The failing line is one the codemod left as written (reported, not rewritten).
        lines = path.read_text().splitlines()
        failing = {n for n, line in enumerate(lines, start=1) if line.strip() == frames[-1]}
        assert failing & reported, f"fails at {frames[-1]!r}, reported at lines {reported}"
        return
    reference = REFERENCE[script]
    if "scales" in reference or "scales_used" in reference:
        assert result == _under_keras_3s_rule(reference)
        return
    # A script of several runs whose scale reaches Keras 2's floor or cap (dynamic_trajectory):
    # Keras 3's rule gives other numbers by design; allowed only with the manual work or a note
    # at a training call, as in test_patterns.py.
    noted = reported | {f.line for f in findings if f.note}
    training = {
        n for n, line in enumerate(path.read_text().splitlines(), 1) if _is_training_call(line)
    }
    assert result == reference or training & noted, (training, sorted(noted))
