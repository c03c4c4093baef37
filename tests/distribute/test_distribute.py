"""Both classes under tf.distribute, against a single-device run on the same global batches.

Scenarios run in fresh processes (`scripts/scenario.py`, driven by `harness.py`): the default
strategy on one device, MirroredStrategy on two logical CPU devices, and MultiWorkerMirroredStrategy
with two worker processes on 127.0.0.1. Each trains the same model from the same weights on the
same 6 global batches of 8, with `Model.fit` and with a custom loop around `strategy.run`, with
`compat_lso.LossScaleOptimizer`, `compat_lso.experimental.LossScaleOptimizer` and (as the
reference) `tf.keras.mixed_precision.LossScaleOptimizer`, clean and poisoned: an inf in replica
0's half of global batch 1 and in replica 1's half of global batch 4.

Exact: every replica's loss scale, counter, weights and slots (bit for bit, per replica), the
loss scale, counter and iterations against the single-device run, and the two shim classes
against each other. Under a tolerance: weights, slots and losses against the single-device run
(see `RTOL`/`ATOL`).
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tests.distribute import harness
from tests.distribute import reference as numpy_reference

KERAS_2 = hasattr(tf.keras.mixed_precision.LossScaleOptimizer, "get_scaled_loss")

# A replica sums the per-example gradients of its 4 rows and the all-reduce adds the two sums;
# one device sums all 8 rows at once. Same maths, another float32 summation order: each step
# differs by an ulp or two, and 6 steps of SGD (lr 1/16, momentum 1/2) carry that forward. All
# weights and slots are below 1 in magnitude, so 2 ulp at 1.0 (2 * 2**-23 = 2.4e-7) bounds the
# absolute error; observed: at most 6e-8 (1 ulp at 0.5) absolute, 1.1e-7 relative on the losses.
RTOL = 1e-6
ATOL = 2 * 2.0**-23

CLEAN = "none"
POISONED = "1:0+4:1"  # steps 1 and 4 (0-based), one replica each
POISONED_STEPS = (1, 4)
STEPS = 6
# initial_scale 1024, dynamic_growth_steps 2.
EXPECTED = {
    CLEAN: {"scale": [1024, 2048, 2048, 4096, 4096, 8192], "counter": [1, 0, 1, 0, 1, 0]},
    POISONED: {"scale": [1024, 512, 512, 1024, 512, 512], "counter": [1, 0, 1, 0, 0, 1]},
}

MODES = ["fit", "loop"]
SHIM_CLASSES = ["compat", "experimental"]
STRATEGIES = ["mirrored", "multiworker"]

# Keras 3's Model.fit fails under MultiWorkerMirroredStrategy before any optimizer step, with a
# plain SGD as well and with a tf.data.Dataset or a distributed dataset alike: its
# `_maybe_symbolic_build` (keras/src/backend/tensorflow/trainer.py) calls
# `strategy.reduce("MEAN", <PerReplica batch>)`, which MWMS rejects with "Attempt to convert a
# value (PerReplica:...) with an unsupported type". Nothing a loss scale optimizer can change.
KERAS_3_FIT_MULTIWORKER = (
    "Keras 3's Model.fit does not run under MultiWorkerMirroredStrategy (with any optimizer, "
    "native or plain SGD): Trainer._maybe_symbolic_build calls strategy.reduce('MEAN', "
    "<PerReplica batch>), which MWMS rejects"
)

KERAS_3_NATIVE_POISONED = (
    "Keras 3's native class is no reference for skipped steps: it does not count them as "
    "iterations, and under MirroredStrategy it applied a step whose only non-finite gradient was "
    "on replica 1 (weights became nan); the shim keeps Keras 2's semantics"
)


def _supported(strategy: str, mode: str) -> bool:
    return KERAS_2 or not (strategy == "multiworker" and mode == "fit")


def _runs(strategy: str) -> list[str]:
    runs = []
    for mode in MODES:
        if strategy != "single" and not _supported(strategy, mode):
            continue
        for kind in SHIM_CLASSES:
            runs += [f"{mode}/{kind}/{CLEAN}", f"{mode}/{kind}/{POISONED}"]
        # The native class: the reference on Keras 2. On Keras 3 it has other skip semantics
        # (no floor, skipped steps do not count), so it is compared on clean data only.
        runs += [f"{mode}/native/{CLEAN}"] + ([f"{mode}/native/{POISONED}"] if KERAS_2 else [])
    return runs


class _Results(dict):
    """Reports per strategy; a strategy whose processes failed raises its failure when read, so
    that only the tests using it fail."""

    def __getitem__(self, strategy: str) -> list[dict]:
        result = super().__getitem__(strategy)
        if isinstance(result, harness.ScenarioFailed):
            raise result
        return result


@pytest.fixture(scope="module")
def results() -> dict[str, list[dict]]:
    return _Results(
        harness.run_all({strategy: _runs(strategy) for strategy in ["single", *STRATEGIES]})
    )


def _replicas(reports: list[dict], name: str) -> list[list[dict]]:
    """Per step, one record per replica, across all processes (workers)."""
    per_process = [report["runs"][name]["steps"] for report in reports]
    assert all(len(steps) == STEPS for steps in per_process), name
    return [[steps[i] for steps in per_process] for i in range(STEPS)]


def _loss(record: dict, strategy: str, mode: str) -> float:
    if KERAS_2 and strategy == "multiworker" and mode == "fit":
        # Keras 2's fit logs reduce_per_replica(..., "auto"), which is "sum" under MWMS: the
        # replicas' logged losses added up, twice the global mean here (native class alike).
        return record["loss"] / harness.WORKERS
    return record["loss"]


def _params(strategies=STRATEGIES, kinds=(*SHIM_CLASSES, "native"), poisons=(CLEAN, POISONED)):
    params = []
    for strategy in strategies:
        for mode in MODES:
            for kind in kinds:
                for poison in poisons:
                    marks = []
                    if not _supported(strategy, mode):
                        marks.append(pytest.mark.skip(reason=KERAS_3_FIT_MULTIWORKER))
                    elif kind == "native" and poison == POISONED and not KERAS_2:
                        marks.append(pytest.mark.skip(reason=KERAS_3_NATIVE_POISONED))
                    label = "poisoned" if poison == POISONED else "clean"
                    params.append(
                        pytest.param(
                            strategy,
                            mode,
                            kind,
                            poison,
                            marks=marks,
                            id=f"{strategy}-{mode}-{kind}-{label}",
                        )
                    )
    return params


@pytest.mark.parametrize("strategy, mode, kind, poison", _params())
def test_every_replica_holds_the_same_state_as_the_single_device_run(
    results, strategy, mode, kind, poison
):
    name = f"{mode}/{kind}/{poison}"
    distributed = _replicas(results[strategy], name)
    single = [records[0] for records in _replicas(results["single"], name)]
    for step, (records, reference) in enumerate(zip(distributed, single, strict=True)):
        scales = [s for record in records for s in record["scale"]]
        counters = [c for record in records for c in record["counter"]]
        digests = [d for record in records for d in record["state_digest"]]
        where = f"{name}, step {step}"
        assert len(scales) == 2, where
        # Every replica: the same loss scale and counter, the same weights and slots bit for bit.
        assert scales == [reference["scale"][0]] * 2, where
        assert counters == [reference["counter"][0]] * 2, where
        assert len(set(digests)) == 1, where
        assert [record["iterations"] for record in records] == [reference["iterations"]] * len(
            records
        ), where
        # Against the single-device run on the same global batch: float summation order only.
        for record in records:
            np.testing.assert_allclose(
                record["state"], reference["state"], rtol=RTOL, atol=ATOL, err_msg=where
            )
            np.testing.assert_allclose(
                _loss(record, strategy, mode),
                reference["loss"],
                rtol=RTOL,
                atol=ATOL,
                err_msg=where,
            )


@pytest.mark.parametrize("strategy", ["single", *STRATEGIES])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", SHIM_CLASSES)
@pytest.mark.parametrize("poison", [CLEAN, POISONED], ids=["clean", "poisoned"])
def test_loss_scale_trajectory(results, strategy, mode, kind, poison):
    if not _supported(strategy, mode):
        pytest.skip(KERAS_3_FIT_MULTIWORKER)
    steps = _replicas(results[strategy], f"{mode}/{kind}/{poison}")
    for field in ("scale", "counter"):
        per_replica = [
            [value for record in records for value in record[field]] for records in steps
        ]
        replicas = 1 if strategy == "single" else 2
        assert per_replica == [[expected] * replicas for expected in EXPECTED[poison][field]], field
    # A skipped step still counts as an iteration.
    assert [records[0]["iterations"] for records in steps] == list(range(1, STEPS + 1))


@pytest.mark.parametrize("strategy", ["single", *STRATEGIES])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", SHIM_CLASSES)
def test_a_nonfinite_gradient_on_one_replica_skips_the_step_on_all(results, strategy, mode, kind):
    if not _supported(strategy, mode):
        pytest.skip(KERAS_3_FIT_MULTIWORKER)
    steps = _replicas(results[strategy], f"{mode}/{kind}/{POISONED}")
    digests = [[d for record in records for d in record["state_digest"]] for records in steps]
    scales = [records[0]["scale"][0] for records in steps]
    for step in range(1, STEPS):
        if step in POISONED_STEPS:
            # Weights and slots untouched on every replica, the scale halved exactly once.
            assert digests[step] == digests[step - 1], step
            assert scales[step] == scales[step - 1] / 2, step
        else:
            assert digests[step] != digests[step - 1], step
    assert all(np.isfinite(records[0]["state"]).all() for records in steps)


@pytest.mark.parametrize("strategy", ["single", *STRATEGIES])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("poison", [CLEAN, POISONED], ids=["clean", "poisoned"])
def test_the_classes_train_identically(results, strategy, mode, poison):
    if not _supported(strategy, mode):
        pytest.skip(KERAS_3_FIT_MULTIWORKER)
    kinds = ["experimental"] + (["native"] if KERAS_2 or poison == CLEAN else [])
    for report in results[strategy]:
        compat = report["runs"][f"{mode}/compat/{poison}"]
        for kind in kinds:
            assert report["runs"][f"{mode}/{kind}/{poison}"] == compat, kind


def test_multiworker_workers_report_the_same(results):
    first, second = results["multiworker"]
    assert (first["worker"], second["worker"]) == (0, 1)
    assert first["runs"].keys() == second["runs"].keys()
    for name in first["runs"]:
        ours, theirs = dict(first["runs"][name]), dict(second["runs"][name])
        if name.startswith("loop/"):
            # The script checked each replica's input against its half of the global batch.
            assert (ours.pop("replica_ids"), theirs.pop("replica_ids")) == ([0], [1])
        assert ours == theirs, name


@pytest.mark.parametrize("strategy", ["single", "mirrored"])
def test_each_replica_trained_on_its_own_half(results, strategy):
    for name, run in results[strategy][0]["runs"].items():
        if name.startswith("loop/"):
            assert run["replica_ids"] == ([0] if strategy == "single" else [0, 1]), name


# -- against an independent reference: the single-device run worked out in NumPy --------------

# float32 training against a float64 reference, 6 steps: observed at most 2e-7 absolute.
REFERENCE_RTOL = 1e-5
REFERENCE_ATOL = 1e-6


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", [*SHIM_CLASSES, "native"])
@pytest.mark.parametrize("poison", [CLEAN, POISONED], ids=["clean", "poisoned"])
def test_the_single_device_run_matches_the_numpy_reference(results, mode, kind, poison):
    if kind == "native" and poison == POISONED and not KERAS_2:
        pytest.skip(KERAS_3_NATIVE_POISONED)
    steps = [records[0] for records in _replicas(results["single"], f"{mode}/{kind}/{poison}")]
    expected = numpy_reference.train(poison)
    losses = [step["loss"] for step in expected]
    for index, (record, by_hand) in enumerate(zip(steps, expected, strict=True)):
        where = f"{mode}/{kind}/{poison}, step {index}"
        if kind != "native" or KERAS_2:  # Keras 3's own class keeps its own scale variables
            assert (record["scale"][0], record["counter"][0]) == (
                by_hand["scale"],
                by_hand["counter"],
            ), where
        np.testing.assert_allclose(
            record["state"],
            by_hand["state"],
            rtol=REFERENCE_RTOL,
            atol=REFERENCE_ATOL,
            err_msg=where,
        )
        # fit logs the running mean of the epoch's losses; the custom loop each step's own.
        loss = np.mean(losses[: index + 1]) if mode == "fit" else by_hand["loss"]
        np.testing.assert_allclose(
            record["loss"], loss, rtol=REFERENCE_RTOL, atol=REFERENCE_ATOL, err_msg=where
        )
