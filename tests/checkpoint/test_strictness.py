"""load_legacy_checkpoint says what does not map, and never half-restores silently."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from compat_lso.checkpoint import LegacyCheckpointError, LegacyCheckpointRestore
from tests.checkpoint import fixtures
from tests.checkpoint.fixtures import CHECKPOINTS

ADAM = "keras2_new_adam_dynamic_save_weights"
LEGACY_ADAM = "keras2_legacy_adam_dynamic_save_weights"
FIXED_SGD = "keras2_new_sgd_fixed_checkpoint"


def _snapshot(model, optimizer):
    values = [v.numpy().copy() for v in model.weights]
    return values, int(optimizer.iterations.numpy()), fixtures.loss_scale_state(optimizer)


def _assert_untouched(model, optimizer, snapshot):
    values, iterations, loss_scale = snapshot
    for variable, value in zip(model.weights, values, strict=True):
        np.testing.assert_array_equal(variable.numpy(), value)
    assert int(optimizer.iterations.numpy()) == iterations
    assert fixtures.loss_scale_state(optimizer) == loss_scale


def _sgd_target():
    model = fixtures.build_model()
    optimizer = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.01, momentum=0.9), initial_scale=8.0, dynamic_growth_steps=3
    )
    return model, optimizer


@pytest.mark.parametrize("name", [ADAM, LEGACY_ADAM])
def test_other_optimizer_class_raises_listing_every_slot_and_assigns_nothing(name):
    model, optimizer = _sgd_target()
    before = _snapshot(model, optimizer)

    with pytest.raises(LegacyCheckpointError) as raised:
        compat_lso.load_legacy_checkpoint(fixtures.prefix(name), model=model, optimizer=optimizer)

    message = str(raised.value)
    assert message.startswith(f"Cannot restore {fixtures.prefix(name)}: ")
    assert "nothing was restored" in message and "strict=False" in message
    slot_keys = [
        key
        for key, _, _ in CHECKPOINTS[name]["keys"]
        if "_variables/" in key or ".OPTIMIZER_SLOT" in key
    ]
    assert len(slot_keys) == 12  # m and v for 6 trainable variables
    unmapped = {item.key: item.reason for item in raised.value.unmapped}
    for key in slot_keys:
        assert key in message
        assert "has no counterpart in SGD" in unmapped[key]
    # SGD's momentum state is not in an Adam checkpoint either.
    assert sum("not in the checkpoint" in reason for reason in unmapped.values()) == 6
    _assert_untouched(model, optimizer, before)


def test_strict_false_restores_what_maps_warns_and_lists_the_rest():
    model, optimizer = _sgd_target()
    with pytest.warns(UserWarning, match="restored .* partially") as warned:
        result = compat_lso.load_legacy_checkpoint(
            fixtures.prefix(ADAM), model=model, optimizer=optimizer, strict=False
        )
    assert isinstance(result, LegacyCheckpointRestore)
    assert not result.complete
    assert len(result.unmapped) == 12 + 6
    assert "_variables/1/.ATTRIBUTES/VARIABLE_VALUE" in str(warned[0].message)
    assert "Unmapped (NOT restored):" in str(result)
    # What maps is restored: the model, iterations, the loss scale.
    state = CHECKPOINTS[ADAM]["state"]
    for variable in model.weights:
        key = fixtures.weight_key(variable, model)
        np.testing.assert_array_equal(
            variable.numpy(), np.asarray(state["weights"][key], "float32")
        )
    assert int(optimizer.iterations.numpy()) == state["iterations"]
    assert fixtures.loss_scale_state(optimizer) == (16.0, 1)


def test_dynamic_checkpoint_into_a_fixed_loss_scale_raises():
    model = fixtures.build_model()
    optimizer = compat_lso.LossScaleOptimizer(
        tf.keras.optimizers.Adam(0.01), dynamic=False, initial_scale=8.0
    )
    with pytest.raises(
        LegacyCheckpointError, match="has a dynamic loss scale; the target optimizer has none"
    ) as raised:
        compat_lso.load_legacy_checkpoint(fixtures.prefix(ADAM), model=model, optimizer=optimizer)
    keys = {item.key for item in raised.value.unmapped}
    assert keys == {
        "optimizer/loss_scale/current_loss_scale/.ATTRIBUTES/VARIABLE_VALUE",
        "optimizer/loss_scale/good_steps/.ATTRIBUTES/VARIABLE_VALUE",
    }


def test_plain_optimizer_target_refuses_the_loss_scale_state():
    model = fixtures.build_model()
    optimizer = tf.keras.optimizers.Adam(0.01)
    with pytest.raises(LegacyCheckpointError, match="dynamic loss scale"):
        compat_lso.load_legacy_checkpoint(fixtures.prefix(ADAM), model=model, optimizer=optimizer)


def test_fixed_checkpoint_into_a_dynamic_loss_scale_raises():
    model = fixtures.build_model()
    optimizer = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05, momentum=0.9))
    before = _snapshot(model, optimizer)
    with pytest.raises(LegacyCheckpointError, match="no loss scale state") as raised:
        compat_lso.load_legacy_checkpoint(
            fixtures.prefix(FIXED_SGD), model=model, optimizer=optimizer
        )
    assert {item.key for item in raised.value.unmapped} == {
        "(target) optimizer loss scale",
        "(target) optimizer loss scale good steps",
    }
    _assert_untouched(model, optimizer, before)


def test_shape_mismatch_raises_and_assigns_nothing():
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(3,)),
            tf.keras.layers.Dense(5),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Dense(1),
        ]
    )
    optimizer = fixtures.make_optimizer(ADAM)
    before = _snapshot(model, optimizer)
    with pytest.raises(LegacyCheckpointError) as raised:
        compat_lso.load_legacy_checkpoint(fixtures.prefix(ADAM), model=model, optimizer=optimizer)
    reasons = {item.key: item.reason for item in raised.value.unmapped}
    assert (
        "shape [3, 4] in the checkpoint, [3, 5] in the target"
        in reasons["layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"]
    )
    _assert_untouched(model, optimizer, before)


def test_model_with_a_layer_the_checkpoint_lacks_raises():
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(3,)),
            tf.keras.layers.Dense(4, activation="relu"),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Dense(1),
            tf.keras.layers.Dense(1),
        ]
    )
    with pytest.raises(LegacyCheckpointError) as raised:
        compat_lso.load_legacy_checkpoint(fixtures.prefix(ADAM), model=model)
    missing = [item for item in raised.value.unmapped if item.reason == "not in the checkpoint"]
    assert len(missing) == 2  # the last layer's kernel and bias
    assert all(item.key.startswith("(target) model ") for item in missing)


def test_model_only_restores_the_weights_and_reports_the_optimizer_as_skipped():
    model = fixtures.build_model()
    result = compat_lso.load_legacy_checkpoint(fixtures.prefix(LEGACY_ADAM), model=model)
    assert result.complete
    assert len(result.restored) == len(model.weights) == 8
    optimizer_keys = [key for key, _, _ in CHECKPOINTS[LEGACY_ADAM]["keys"] if "optimizer" in key]
    skipped = {item.key: item.reason for item in result.skipped}
    assert sorted(skipped) == sorted(optimizer_keys)
    assert set(skipped.values()) == {"optimizer state; not restored (optimizer=None)"}
    for variable in model.weights:
        key = fixtures.weight_key(variable, model)
        expected = CHECKPOINTS[LEGACY_ADAM]["state"]["weights"][key]
        np.testing.assert_array_equal(variable.numpy(), np.asarray(expected, "float32"))


def test_optimizer_without_model_cannot_attach_slots():
    name = "keras2_legacy_sgd_dynamic_checkpoint"
    optimizer = fixtures.make_optimizer(name)
    with pytest.raises(LegacyCheckpointError, match="pass model= to attach slots"):
        compat_lso.load_legacy_checkpoint(fixtures.prefix(name), optimizer=optimizer)
    with pytest.warns(UserWarning):
        result = compat_lso.load_legacy_checkpoint(
            fixtures.prefix(name), optimizer=optimizer, strict=False
        )
    assert int(optimizer.iterations.numpy()) == 4
    assert fixtures.loss_scale_state(optimizer) == (64.0, 1)
    assert len(result.unmapped) == 6
    model_keys = [
        key
        for key, _, _ in CHECKPOINTS[name]["keys"]
        if key.startswith("model/") and "OPTIMIZER_SLOT" not in key
    ]
    skipped = {item.key: item.reason for item in result.skipped}
    assert {skipped[key] for key in model_keys} == {"model weight; not restored (model=None)"}
    restored = {item.key for item in result.restored}
    assert "optimizer/learning_rate/.ATTRIBUTES/VARIABLE_VALUE" in restored


def test_needs_a_model_or_an_optimizer():
    with pytest.raises(ValueError, match="needs model=, optimizer=, or both"):
        compat_lso.load_legacy_checkpoint(fixtures.prefix(ADAM))


def test_unbuilt_model_is_refused():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
    with pytest.raises(ValueError, match="The model is not built"):
        compat_lso.load_legacy_checkpoint(fixtures.prefix(ADAM), model=model)


def test_directory_prefix_uses_its_checkpoint_index(tmp_path):
    with pytest.raises(ValueError, match="without a `checkpoint` index file"):
        compat_lso.load_legacy_checkpoint(tmp_path, model=fixtures.build_model())
    for file in (fixtures.DIRECTORY / ADAM).iterdir():
        shutil.copy(file, tmp_path / file.name)
    tf.compat.v1.train.update_checkpoint_state(str(tmp_path), str(tmp_path / "ckpt"))
    model = fixtures.build_model()
    result = compat_lso.load_legacy_checkpoint(tmp_path, model=model)
    assert result.prefix == str(tmp_path / "ckpt")
    assert len(result.restored) == 8


def test_name_based_checkpoint_is_refused(tmp_path):
    prefix = str(tmp_path / "v1")
    tf.raw_ops.SaveV2(
        prefix=prefix,
        tensor_names=["dense/kernel"],
        shape_and_slices=[""],
        tensors=[tf.zeros([3, 4])],
    )
    with pytest.raises(
        ValueError, match="name-based \\(TF 1\\) checkpoint without an object graph"
    ):
        compat_lso.load_legacy_checkpoint(prefix, model=fixtures.build_model())


def test_import_stays_cheap_and_exposes_the_function():
    code = (
        "import sys, compat_lso\n"
        "assert 'load_legacy_checkpoint' in compat_lso.__all__\n"
        "assert 'load_legacy_checkpoint' in dir(compat_lso)\n"
        "assert 'tensorflow' not in sys.modules, 'import compat_lso imported TensorFlow'\n"
        "f = compat_lso.load_legacy_checkpoint\n"
        "import compat_lso.checkpoint as c\n"
        "assert f is c.load_legacy_checkpoint\n"
        "assert 'libcst' not in sys.modules, 'the runtime shim imported libcst'\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_not_a_tensorflow_checkpoint_is_refused_clearly(tmp_path):
    (tmp_path / "weights.h5").write_bytes(b"\x89HDF\r\n\x1a\n")
    with pytest.raises(ValueError, match="is not a TensorFlow-format checkpoint prefix"):
        compat_lso.load_legacy_checkpoint(tmp_path / "weights.h5", model=fixtures.build_model())
    with pytest.raises(ValueError, match="is not a TensorFlow-format checkpoint prefix"):
        compat_lso.load_legacy_checkpoint(
            tmp_path / "missing" / "ckpt", model=fixtures.build_model()
        )


def test_non_optimizer_is_refused():
    with pytest.raises(
        TypeError, match=r"optimizer must be a .* optimizer or loss scale optimizer, got str"
    ):
        compat_lso.load_legacy_checkpoint(fixtures.prefix(ADAM), optimizer="adam")
