"""Checkpoints written by TF 2.15 (Keras 2) and in TF 2.2's layout restore on every backend."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from tests.checkpoint import fixtures
from tests.checkpoint.fixtures import CHECKPOINTS, NAMES
from tests.checkpoint.models import training_data
from tests.shim.backend import IS_KERAS_2, IS_KERAS_3, NATIVE_LSO


@pytest.mark.parametrize("name", NAMES)
def test_restores_every_value_recorded_by_keras_2(name):
    model, optimizer = fixtures.make_targets(name)

    result = compat_lso.load_legacy_checkpoint(
        fixtures.prefix(name), model=model, optimizer=optimizer
    )

    assert result.complete, str(result)
    assert not result.unmapped
    fixtures.assert_state(model, optimizer, name)
    # Every value in the checkpoint is accounted for, exactly once.
    keys = {key for key, _, _ in CHECKPOINTS[name]["keys"]} - {"_CHECKPOINTABLE_OBJECT_GRAPH"}
    reported = [r.key for r in result.restored] + [s.key for s in result.skipped]
    assert sorted(reported) == sorted(keys)


@pytest.mark.parametrize("name", NAMES)
def test_restored_state_trains_on_as_keras_2_did(name):
    # The step after the checkpoint, taken by TF 2.15 with the state it had saved: bias
    # correction (iterations), momentum/velocity slots and the loss scale all enter it.
    model, optimizer = fixtures.make_targets(name)
    compat_lso.load_legacy_checkpoint(fixtures.prefix(name), model=model, optimizer=optimizer)
    batch = CHECKPOINTS[name]["next_batch"]
    x, y = np.asarray(batch["x"], "float32"), np.asarray(batch["y"], "float32")
    noise_driven = _noise_driven_elements(model, x)

    fixtures.train_step(model, optimizer, x, y)

    expected = CHECKPOINTS[name]["next_step"]
    for variable in model.weights:
        key = fixtures.weight_key(variable, model)
        keep = ~noise_driven.get(key, np.zeros(variable.shape, bool))
        np.testing.assert_allclose(
            variable.numpy()[keep],
            np.asarray(expected["weights"][key], "float32")[keep],
            rtol=1e-5,
            atol=1e-6,
            err_msg=key,
        )
    assert int(optimizer.iterations.numpy()) == expected["iterations"]
    recorded = expected["loss_scale"]
    assert fixtures.loss_scale_state(optimizer) == (
        None if recorded is None else (recorded["current_loss_scale"], recorded["good_steps"])
    )


def _noise_driven_elements(model, x) -> dict[str, np.ndarray]:
    """The elements whose next value depends on the CPU's rounding, not on the restored state.

    In `dense_bn_dense`, a first-layer unit whose ReLU is active for every row of the batch feeds
    BatchNormalization linearly, and BatchNormalization (training mode) removes any constant
    shift: that unit's bias gradient is zero in exact arithmetic. TensorFlow computes rounding
    noise instead (about 1e-7, its sign set by the CPU's summation order), and Adam normalises
    the noise into a full-size step, so its next value differs between machines. A dead unit
    (ReLU inactive for every row) gets an exact zero gradient and stays compared.
    """
    first = model.layers[0]
    following = model.layers[1] if len(model.layers) > 1 else None
    if not (
        isinstance(first, tf.keras.layers.Dense)
        and isinstance(following, tf.keras.layers.BatchNormalization)
        and first.use_bias
    ):
        return {}
    pre_activation = (x @ first.kernel.numpy()) + first.bias.numpy()
    always_active = np.all(pre_activation > 0, axis=0)
    return {fixtures.weight_key(first.bias, model): always_active}


def test_tf22_checkpoint_is_in_tf22_layout():
    keys = [key for key, _, _ in CHECKPOINTS["tf22_legacy_adam_dynamic_checkpoint"]["keys"]]
    assert "optimizer/base_optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "optimizer/loss_scale/current_loss_scale/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "optimizer/loss_scale/good_steps/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert (
        "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/base_optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"
        in keys
    )
    assert not [key for key in keys if key.startswith("optimizer/iter")]
    # The file holds what expected.json says it does.
    actual = [
        name
        for name, _ in tf.train.list_variables(
            fixtures.prefix("tf22_legacy_adam_dynamic_checkpoint")
        )
    ]
    assert sorted(actual) == sorted(keys)


@pytest.mark.parametrize(
    ("name", "layout"),
    [
        ("tf22_legacy_adam_dynamic_checkpoint", "TF 2.2 layout"),
        ("keras2_legacy_adam_dynamic_save_weights", "Keras 2 layout"),
        ("keras2_new_sgd_fixed_checkpoint", "Keras 2 layout"),
    ],
)
def test_result_names_the_layout_and_reads_well(name, layout):
    model, optimizer = fixtures.make_targets(name)
    result = compat_lso.load_legacy_checkpoint(
        fixtures.prefix(name), model=model, optimizer=optimizer
    )
    assert layout in result.layout
    text = str(result)
    assert text.startswith(f"Restored {len(result.restored)} values from {fixtures.prefix(name)}")
    assert "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE -> model " in text
    assert "-> optimizer iterations []" in text
    assert "Unmapped" not in text


def test_legacy_hyperparameters_are_reported_not_silently_dropped():
    name = "keras2_legacy_adam_dynamic_save_weights"
    model, optimizer = fixtures.make_targets(name)
    result = compat_lso.load_legacy_checkpoint(
        fixtures.prefix(name), model=model, optimizer=optimizer
    )
    restored = {r.key for r in result.restored}
    skipped = {s.key: s.reason for s in result.skipped}
    for hyper in ("beta_1", "beta_2", "decay"):
        key = f"optimizer/{hyper}/.ATTRIBUTES/VARIABLE_VALUE"
        if (
            IS_KERAS_2
        ):  # the legacy Adam has them as variables: restored, as tf.train.Checkpoint does
            assert key in restored
        else:  # Keras 3 keeps them as Python numbers, equal to the saved ones
            assert key in skipped and "the target keeps its own" in skipped[key], skipped
    if IS_KERAS_3:
        assert "the target's is equal" in skipped["optimizer/beta_1/.ATTRIBUTES/VARIABLE_VALUE"]
        assert "Adam has no 'decay'" in skipped["optimizer/decay/.ATTRIBUTES/VARIABLE_VALUE"]


@pytest.mark.skipif(not IS_KERAS_3, reason="Keras 3's own LossScaleOptimizer")
def test_keras_3_native_loss_scale_optimizer_is_a_target_too():
    import keras

    name = "keras2_new_adam_dynamic_save_weights"
    model = fixtures.build_model()
    optimizer = keras.optimizers.LossScaleOptimizer(
        keras.optimizers.Adam(0.01), initial_scale=8.0, dynamic_growth_steps=3
    )
    result = compat_lso.load_legacy_checkpoint(
        fixtures.prefix(name), model=model, optimizer=optimizer
    )
    assert result.complete
    state = CHECKPOINTS[name]["state"]
    assert float(optimizer.dynamic_scale.numpy()) == state["loss_scale"]["current_loss_scale"]
    assert int(optimizer.step_counter.numpy()) == state["loss_scale"]["good_steps"]
    assert int(optimizer.iterations.numpy()) == state["iterations"]


# -- Keras 2: the shim's classes restore these checkpoints with tf.train.Checkpoint too ----


def _native_restore(name, optimizer):
    """Restore with TensorFlow's own machinery, creating the optimizer's variables afterwards."""
    model = fixtures.MODELS[CHECKPOINTS[name]["model"]]()
    if CHECKPOINTS[name]["writer"] == "model.save_weights":
        model.compile(optimizer=optimizer, loss="mse")
        status = model.load_weights(fixtures.prefix(name))
    else:
        status = tf.train.Checkpoint(model=model, optimizer=optimizer).read(fixtures.prefix(name))
    inner = optimizer.inner_optimizer
    if hasattr(inner, "_create_all_weights"):  # legacy: slots are restored as they are created
        inner._create_all_weights(model.trainable_variables)
    else:
        inner.build(model.trainable_variables)
    return model, status


@pytest.mark.skipif(
    not IS_KERAS_2, reason="tf.train.Checkpoint restores Keras 2 checkpoints only on Keras 2"
)
@pytest.mark.parametrize("name", NAMES)
def test_keras_2_shim_restores_with_tf_train_checkpoint(name):
    optimizer = fixtures.make_optimizer(name)
    model, status = _native_restore(name, optimizer)
    status.assert_consumed()
    fixtures.assert_state(model, optimizer, name)


@pytest.mark.skipif(
    not IS_KERAS_2, reason="tf.train.Checkpoint restores Keras 2 checkpoints only on Keras 2"
)
@pytest.mark.parametrize("name", NAMES)
def test_keras_2_load_legacy_checkpoint_matches_tf_train_checkpoint(name):
    native_model, _ = _native_restore(name, native_optimizer := fixtures.make_optimizer(name))
    model, optimizer = fixtures.make_targets(name)
    compat_lso.load_legacy_checkpoint(fixtures.prefix(name), model=model, optimizer=optimizer)
    for ours, theirs in zip(model.weights, native_model.weights, strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    class_name = CHECKPOINTS[name]["optimizer"]["class"]
    slot_names = CHECKPOINTS[name]["state"]["slots"]
    for ours, theirs in zip(
        model.trainable_variables, native_model.trainable_variables, strict=True
    ):
        for slot_name in slot_names[fixtures.weight_key(ours, model)]:
            np.testing.assert_array_equal(
                np.asarray(fixtures.slot(optimizer, ours, slot_name, class_name)),
                np.asarray(fixtures.slot(native_optimizer, theirs, slot_name, class_name)),
            )
    inner, native_inner = optimizer.inner_optimizer, native_optimizer.inner_optimizer
    assert int(inner.iterations.numpy()) == int(native_inner.iterations.numpy())
    for hyper in getattr(native_inner, "_hyper", {}):  # legacy: every hyperparameter variable
        assert float(inner._get_hyper(hyper)) == float(native_inner._get_hyper(hyper)), hyper
    assert float(tf.keras.backend.get_value(inner.learning_rate)) == float(
        tf.keras.backend.get_value(native_inner.learning_rate)
    )
    assert fixtures.loss_scale_state(optimizer) == fixtures.loss_scale_state(native_optimizer)


@pytest.mark.skipif(not IS_KERAS_2, reason="Keras 2's native class")
def test_keras_2_native_class_loses_tf22_iterations_and_the_shim_does_not():
    # Why compat_lso/keras2/optimizer.py replaces Keras's TF 2.2 stand-in: Keras's own class
    # restores the slots and the loss scale of a TF 2.2 checkpoint but leaves `iterations` at 0.
    name = "tf22_legacy_adam_dynamic_checkpoint"
    config = dict(CHECKPOINTS[name]["optimizer"]["loss_scale_optimizer"])
    native = NATIVE_LSO(tf.keras.optimizers.deserialize(config.pop("inner_optimizer")), **config)
    assert not isinstance(native, compat_lso.LossScaleOptimizer)
    _native_restore(name, native)
    assert int(native.iterations.numpy()) == 0
    shim = fixtures.make_optimizer(name)
    _native_restore(name, shim)
    assert int(shim.iterations.numpy()) == CHECKPOINTS[name]["state"]["iterations"] == 4


@pytest.mark.skipif(not IS_KERAS_2, reason="Keras 2's native class")
@pytest.mark.parametrize("legacy", [True, False], ids=["legacy-inner", "new-inner"])
def test_keras_2_shim_writes_the_same_checkpoint_as_the_native_class(tmp_path, legacy):
    # The TF 2.2 stand-in the shim tracks as `base_optimizer` changes restoring, not saving.
    optimizers = tf.keras.optimizers.legacy if legacy else tf.keras.optimizers

    def write(make_lso, directory):
        tf.keras.utils.set_random_seed(1)
        model = fixtures.build_model()
        optimizer = make_lso(optimizers.Adam(0.01), initial_scale=8.0, dynamic_growth_steps=3)
        x, y = training_data()
        fixtures.train_step(model, optimizer, x, y)
        return tf.train.Checkpoint(model=model, optimizer=optimizer).write(
            str(tmp_path / directory / "ckpt")
        )

    native = write(NATIVE_LSO, "native")
    shim = write(compat_lso.LossScaleOptimizer, "shim")
    native_reader, shim_reader = tf.train.load_checkpoint(native), tf.train.load_checkpoint(shim)
    native_keys = sorted(native_reader.get_variable_to_shape_map())
    assert sorted(shim_reader.get_variable_to_shape_map()) == native_keys
    for key in native_keys:
        if key != "_CHECKPOINTABLE_OBJECT_GRAPH":
            np.testing.assert_array_equal(
                shim_reader.get_tensor(key), native_reader.get_tensor(key), err_msg=key
            )


@pytest.mark.parametrize(
    "name", ["keras2_legacy_adam_dynamic_save_weights", "tf22_legacy_adam_dynamic_checkpoint"]
)
def test_restored_optimizer_keeps_training_with_fit(name):
    model, optimizer = fixtures.make_targets(name)
    compat_lso.load_legacy_checkpoint(fixtures.prefix(name), model=model, optimizer=optimizer)
    model.compile(optimizer=optimizer, loss="mse")
    x, y = training_data()
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    assert int(optimizer.iterations.numpy()) == CHECKPOINTS[name]["state"]["iterations"] + 1
    scale, good_steps = fixtures.loss_scale_state(optimizer)
    recorded = CHECKPOINTS[name]["state"]["loss_scale"]
    growth = CHECKPOINTS[name]["optimizer"]["loss_scale_optimizer"]["dynamic_growth_steps"]
    # One more finite step: counted, or (at the growth step) the scale doubles.
    if recorded["good_steps"] + 1 == growth:
        assert (scale, good_steps) == (recorded["current_loss_scale"] * 2, 0)
    else:
        assert (scale, good_steps) == (recorded["current_loss_scale"], recorded["good_steps"] + 1)
    assert all(np.isfinite(v.numpy()).all() for v in model.weights)


@pytest.mark.parametrize(
    "name", ["keras2_legacy_adam_dynamic_save_weights", "tf22_legacy_adam_dynamic_checkpoint"]
)
def test_restores_into_a_mixed_float16_model(name):
    # Mixed precision is why these checkpoints have a loss scale: float16 compute, float32 weights.
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model, optimizer = fixtures.make_targets(name)
        assert model.layers[0].compute_dtype == "float16"
        result = compat_lso.load_legacy_checkpoint(
            fixtures.prefix(name), model=model, optimizer=optimizer
        )
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    assert result.complete
    fixtures.assert_state(model, optimizer, name)


def test_fixtures_hold_finite_numbers():
    # NaN equals NaN in assert_array_equal: a diverged fixture would check nothing.
    for name, record in CHECKPOINTS.items():
        for which in ("state", "next_step"):
            values = list(record[which]["weights"].values())
            values += [v for slots in record[which]["slots"].values() for v in slots.values()]
            assert all(np.isfinite(np.asarray(v, "float64")).all() for v in values), (name, which)


@pytest.mark.skipif(not IS_KERAS_2, reason="Keras 2 has both optimizer generations")
@pytest.mark.parametrize(
    ("name", "legacy_target"),
    [
        ("keras2_legacy_adam_dynamic_save_weights", False),
        ("keras2_new_adam_dynamic_save_weights", True),
    ],
    ids=["legacy-checkpoint-into-new-adam", "new-checkpoint-into-legacy-adam"],
)
def test_keras_2_crosses_optimizer_generations(name, legacy_target):
    adam = tf.keras.optimizers.legacy.Adam if legacy_target else tf.keras.optimizers.Adam
    model = fixtures.build_model()
    optimizer = compat_lso.LossScaleOptimizer(adam(0.01), initial_scale=8.0, dynamic_growth_steps=3)
    result = compat_lso.load_legacy_checkpoint(
        fixtures.prefix(name), model=model, optimizer=optimizer
    )
    assert result.complete, str(result)
    fixtures.assert_state(model, optimizer, name)
    restored = {r.key: r.target for r in result.restored}
    learning_rate = "optimizer/_learning_rate" if legacy_target else "optimizer/learning_rate"
    assert restored[f"{learning_rate}/.ATTRIBUTES/VARIABLE_VALUE"] == "optimizer learning_rate"
