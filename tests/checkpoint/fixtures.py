"""The committed checkpoints.

TF 2.15 wrote them, running tests/fixtures/checkpoints/make_checkpoints.py.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import tensorflow as tf

import compat_lso
from tests.checkpoint.models import MODELS, build_model  # noqa: F401 (build_model: for the tests)
from tests.shim.backend import IS_KERAS_3

DIRECTORY = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "checkpoints"
EXPECTED = json.loads((DIRECTORY / "expected.json").read_text())
CHECKPOINTS = EXPECTED["checkpoints"]
NAMES = sorted(CHECKPOINTS)

# The per-variable state each Keras 2 slot holds, named as Keras 2's new optimizers and Keras 3's
# name it (written independently of compat_lso.checkpoint.SLOT_TABLE, from the optimizers' sources).
STATE_OF_LEGACY_SLOT = {
    "Adam": {"m": "_momentums", "v": "_velocities"},
    "SGD": {"momentum": "momentums"},
    "RMSprop": {"rms": "_velocities", "momentum": "_momentums", "mg": "_average_gradients"},
}


def prefix(name: str) -> str:
    return str(DIRECTORY / name / "ckpt")


def make_optimizer(name: str):
    """compat_lso's LossScaleOptimizer as the checkpoint's writer configured it (its config)."""
    return compat_lso.LossScaleOptimizer.from_config(
        CHECKPOINTS[name]["optimizer"]["loss_scale_optimizer"]
    )


def make_targets(name: str):
    model = MODELS[CHECKPOINTS[name]["model"]]()
    optimizer = make_optimizer(name)
    return model, optimizer


def weight_key(variable, model, prefix: str = "") -> str:
    """`layer_with_weights-N/.../<name>`, as make_checkpoints.py keys the recorded weights."""
    for n, layer in enumerate(layer for layer in model.layers if layer.weights):
        if isinstance(layer, tf.keras.Model):
            try:
                return weight_key(variable, layer, f"{prefix}layer_with_weights-{n}/")
            except KeyError:
                continue
        for weight in layer.weights:
            if weight is variable:
                short_name = str(weight.name).split(":")[0].rsplit("/", 1)[-1]
                return f"{prefix}layer_with_weights-{n}/{short_name}"
    raise KeyError(variable.name)


def slot(optimizer, variable, legacy_slot_or_state: str, class_name: str):
    """The target optimizer's state for `variable`, named as Keras 2 named it in the checkpoint."""
    inner = optimizer.inner_optimizer
    state = STATE_OF_LEGACY_SLOT[class_name].get(legacy_slot_or_state, legacy_slot_or_state)
    if IS_KERAS_3:
        return getattr(inner, state)[inner._get_variable_index(variable)]
    if hasattr(inner, "get_slot_names"):  # a legacy OptimizerV2
        legacy = {v: k for k, v in STATE_OF_LEGACY_SLOT[class_name].items()}.get(state, state)
        return inner.get_slot(variable, legacy)
    return getattr(inner, state)[inner._index_dict[inner._var_key(variable)]]


def loss_scale_state(optimizer):
    """(current scale, good steps) through the TF 2.4 API, or None for a fixed loss scale."""
    if not optimizer.dynamic:
        return None
    return float(optimizer.loss_scale.numpy()), int(optimizer.dynamic_counter.numpy())


def assert_state(model, optimizer, name: str, which: str = "state") -> None:
    """The model and optimizer hold exactly the values recorded for checkpoint `name`."""
    record = CHECKPOINTS[name]
    expected = record[which]
    class_name = record["optimizer"]["class"]
    for variable in model.weights:
        key = weight_key(variable, model)
        np.testing.assert_array_equal(
            variable.numpy(), np.asarray(expected["weights"][key], "float32"), err_msg=key
        )
    assert int(optimizer.iterations.numpy()) == expected["iterations"]
    inner_lr = optimizer.inner_optimizer.learning_rate
    assert float(np.float32(tf.keras.backend.get_value(inner_lr))) == np.float32(
        expected["learning_rate"]
    )
    recorded_scale = expected["loss_scale"]
    assert loss_scale_state(optimizer) == (
        None
        if recorded_scale is None
        else (recorded_scale["current_loss_scale"], recorded_scale["good_steps"])
    )
    for variable in model.trainable_variables:
        key = weight_key(variable, model)
        for slot_name, values in expected["slots"][key].items():
            np.testing.assert_array_equal(
                np.asarray(slot(optimizer, variable, slot_name, class_name)),
                np.asarray(values, "float32"),
                err_msg=f"{slot_name} of {key}",
            )


def train_step(model, optimizer, x, y) -> None:
    """One step of the TF 2.4 custom loop, as make_checkpoints.py took it."""
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
