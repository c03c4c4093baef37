"""TF official models' custom loop under MirroredStrategy (two replicas), as TF 2.4-2.15 code.

scripts/official_loop.py builds nothing beforehand and applies gradients inside `strategy.run`
(issue 32). Run as its user runs it through `python -m compat_lso run`, and after
`compat-lso-migrate --target shim`, it must train as TF 2.15 did: the loss scale trajectory
worked out by hand (test_distribute.EXPECTED) and the weights, slots and losses of the NumPy
reference (reference.py). After `--target keras3` Keras 3's own LossScaleOptimizer runs it, which
fails in the first step with several replicas (keras-team/keras#19246, #18666, open upstream):
the codemod reports that line (LSO022), and the strict check below says when upstream fixes it.
The three runs are three fresh processes, started together.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
import tensorflow as tf

from codemods.apply.engine import migrate
from tests.distribute import harness
from tests.distribute import reference as numpy_reference
from tests.distribute.test_distribute import (
    EXPECTED,
    POISONED,
    REFERENCE_ATOL,
    REFERENCE_RTOL,
    STEPS,
)

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "official_loop.py"
KERAS_3 = not hasattr(tf.keras.mixed_precision.LossScaleOptimizer, "get_scaled_loss")
KERAS_3_REPLICA_STEP = "You must feed a value for placeholder tensor"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, list[dict] | harness.ScenarioFailed]:
    folder = tmp_path_factory.mktemp("official_loop")
    source = SCRIPT.read_text(encoding="utf-8")
    commands = {"run": [sys.executable, "-m", "compat_lso", "run", str(SCRIPT)]}
    for target in ("shim", "keras3") if KERAS_3 else ("shim",):
        migrated = folder / f"official_loop_{target}.py"
        migrated.write_text(migrate(source, target).text, encoding="utf-8")
        commands[target] = [sys.executable, str(migrated)]
    results = harness.run_commands(list(commands.values()))
    return {
        name: result if isinstance(result, harness.ScenarioFailed) else result[0]["steps"]
        for name, result in zip(commands, results, strict=True)
    }


@pytest.mark.parametrize("how", ["run", "shim"])
def test_trains_as_tf_2_15_did(runs, how):
    steps = runs[how]
    if isinstance(steps, harness.ScenarioFailed):
        raise steps
    assert [s["scale"] for s in steps] == EXPECTED[POISONED]["scale"]
    assert [s["counter"] for s in steps] == EXPECTED[POISONED]["counter"]
    assert [s["iterations"] for s in steps] == list(range(1, STEPS + 1))  # skips count
    for index, (step, by_hand) in enumerate(
        zip(steps, numpy_reference.train(POISONED), strict=True)
    ):
        for field in ("state", "loss"):
            np.testing.assert_allclose(
                step[field],
                by_hand[field],
                rtol=REFERENCE_RTOL,
                atol=REFERENCE_ATOL,
                err_msg=f"{how}, step {index}, {field}",
            )


def test_run_and_the_shim_target_give_the_same_bits(runs):
    assert runs["run"] == runs["shim"]


@pytest.mark.skipif(not KERAS_3, reason="after --target keras3 only Keras 3's class runs it")
def test_keras3_target_reports_the_step_keras_3_cannot_run(runs):
    findings = migrate(SCRIPT.read_text(encoding="utf-8"), "keras3").findings
    reported = [(f.code, f.line) for f in findings if f.code == "LSO022" and not f.note]
    line = next(
        i
        for i, text in enumerate(SCRIPT.read_text(encoding="utf-8").splitlines(), 1)
        if "optimizer.apply_gradients(" in text
    )
    assert reported == [("LSO022", line)]
    # Strict: when Keras 3 runs it, this fails, and LSO022's report of it can go.
    failure = runs["keras3"]
    assert isinstance(failure, harness.ScenarioFailed), "Keras 3 now runs the replica step"
    assert KERAS_3_REPLICA_STEP in str(failure)
