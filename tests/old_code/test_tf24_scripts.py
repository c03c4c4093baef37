"""TF 2.4-2.15 scripts give TF 2.15's numbers, bit for bit, on every backend.

scripts/tf24/ holds code written against the non-experimental
`tf.keras.mixed_precision.LossScaleOptimizer` as TF 2.4-2.15 code was: positional arguments, a
fixed scale, the manual `get_scaled_loss` / `get_unscaled_gradients` pattern in `tf.function`,
a dynamic trajectory with inf and nan gradients, `Model.fit` under `mixed_float16` with and
without an explicit optimizer, reads of `loss_scale`, `dynamic_counter` and `dynamic`.

The reference, references/tf24.tf215.json, is what they reported running natively on TF 2.15
(Keras 2's own classes, no compat_lso), written by `nox -s "record(tf215)"`; the file names the
command and versions. Each script runs in a fresh process (harness.py).
"""

from __future__ import annotations

import functools
import json
import pathlib
from typing import Any

import pytest

from tests.old_code import harness, record
from tests.shim.backend import IS_KERAS_3

TESTS = pathlib.Path(__file__).parents[1]
REFERENCE_FILE = pathlib.Path(__file__).parent / "references" / "tf24.tf215.json"
REFERENCE = record.load(REFERENCE_FILE)
SCRIPTS = sorted(REFERENCE)
# One script through each of the other two ways to install; `run` covers every script.
ONE_SCRIPT = "old_code/scripts/tf24/custom_loop.py"
# Its only loss scale optimizer is the one `compile()` adds under mixed_float16: no code to
# migrate, so TF 2.15's meaning comes from `run`'s compile wrapping alone.
NOTHING_TO_MIGRATE = {"old_code/scripts/tf24/fit_auto.py"}


@functools.cache
def _result(script: str, mode: str) -> dict[str, Any]:
    return harness.run_script(TESTS / script, mode)


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


@pytest.mark.parametrize("mode", ["install", "startup-hook"])
def test_install_and_startup_hook_give_tf215_numbers(mode):
    assert _result(ONE_SCRIPT, mode) == REFERENCE[ONE_SCRIPT]


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
