"""One loss scale optimizer trains several models, as in Keras 2 (keras3/shared_optimizer.py).

Keras 2's optimizers created a variable's slots at its first step; a Keras 3 optimizer refuses the
variables it was not built for. The shim's class adds their slots at their first step. The
reference is Keras 3's own way to share one optimizer: `build()` for every model's variables
before the first step. Each Keras 3 optimizer, through the shim's class, must train model A, then
model B (unseen until then), then A again, eagerly and in a tf.function, with an overflowing step
of B's among them, to the same bits as the one built for both at once; an optimizer whose state
cannot grow that way is refused with the fix, and left as it was. Against TF 2.15's own numbers:
tests/old_code/test_gan_project.py (a legacy SGD shared natively, lazily, and the GAN project).
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from tests.shim.backend import CHECKPOINT_REFUSES_OPTIMIZERS, IS_KERAS_2

pytestmark = pytest.mark.skipif(
    IS_KERAS_2, reason="Keras 2's optimizers share as they are (the shim is Keras 2's class)"
)

# (class name, constructor settings): each Keras 3 optimizer, and settings that change its slots.
SHAREABLE = [
    ("SGD", {}),
    ("SGD", {"momentum": 0.5, "nesterov": True}),
    ("Adam", {}),
    ("Adam", {"amsgrad": True}),
    ("AdamW", {}),
    ("Adamax", {}),
    ("Adagrad", {}),
    ("Adadelta", {}),
    ("RMSprop", {}),
    ("RMSprop", {"momentum": 0.5, "centered": True}),
    ("Ftrl", {}),
    ("Lion", {}),
    ("Lamb", {}),
    ("Adafactor", {}),
]
REFUSED = [
    ("Nadam", {}, "'_u_product'"),
    ("SGD", {"use_ema": True}, "use_ema=True"),
    ("Adam", {"gradient_accumulation_steps": 2}, "gradient_accumulation_steps=2"),
]


def _model_variables(seed: int, shapes: list[tuple[int, ...]]) -> list[tf.Variable]:
    rng = np.random.default_rng(seed)
    return [tf.Variable((rng.integers(-8, 9, size=s) / 16).astype("float32")) for s in shapes]


def _gradients(variables, step: int, overflow: bool = False):
    grads = [tf.fill(v.shape, 0.125 * (step + 1)) for v in variables]
    if overflow:
        grads[0] = grads[0] * np.inf
    return grads


def _train(name: str, settings: dict, up_front: bool, traced: bool):
    import keras

    a = _model_variables(1, [(3, 2), (2,)])
    b = _model_variables(2, [(2, 4), (4,)])
    if not hasattr(keras.optimizers, name):
        pytest.skip(f"Keras {keras.__version__} has no optimizers.{name} (a later release adds it)")
    inner = getattr(keras.optimizers, name)(learning_rate=0.0625, **settings)
    optimizer = compat_lso.LossScaleOptimizer(inner, initial_scale=4.0, dynamic_growth_steps=2)
    if up_front:
        optimizer.build(a + b)

    def step(grads, variables):
        # As TF 2.4's manual pattern does (the gradients of a loss scaled by 4, say).
        unscaled = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(unscaled, variables, strict=True))

    # A step function per model, as Model.fit makes one: TensorFlow creates variables only in a
    # tf.function's first trace (Keras 2's slots for B in A's function failed the same way).
    apply_a, apply_b = (tf.function(step), tf.function(step)) if traced else (step, step)
    for index in range(3):
        apply_a(_gradients(a, index), a)
        apply_b(_gradients(b, index, overflow=index == 1), b)
    apply_a(_gradients(a, 3), a)
    return [v.numpy() for v in a + b], [
        int(optimizer.iterations.numpy()),
        float(optimizer.loss_scale.numpy()),
        len(inner.variables),
    ]


# Each in a tf.function (as Model.fit trains); two eagerly too (as a plain custom loop does).
CASES = [(*case, True) for case in SHAREABLE] + [(*case, False) for case in SHAREABLE[1:3]]


@pytest.mark.parametrize(("name", "settings", "traced"), CASES, ids=lambda v: str(v))
def test_a_model_trained_after_another_gets_the_numbers_of_an_optimizer_built_for_both(
    name, settings, traced
):
    weights, state = _train(name, settings, up_front=False, traced=traced)
    expected_weights, expected_state = _train(name, settings, up_front=True, traced=traced)
    # One step counter (7: a skipped step counts) and one scale: 4 -> 8 after two finite steps
    # (A's and B's), 4 at B's overflow, 8 after the next two.
    assert state == expected_state
    assert state[:2] == [7, 8.0]
    for got, expected in zip(weights, expected_weights, strict=True):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(("name", "settings", "why"), REFUSED, ids=lambda v: str(v))
def test_an_optimizer_whose_state_cannot_grow_is_refused_with_the_fix_and_left_as_it_was(
    name, settings, why
):
    import keras

    from compat_lso.keras3.shared_optimizer import NotShareable

    a = _model_variables(1, [(3, 2), (2,)])
    b = _model_variables(2, [(2, 4), (4,)])
    if not hasattr(keras.optimizers, name):
        pytest.skip(f"Keras {keras.__version__} has no optimizers.{name} (a later release adds it)")
    inner = getattr(keras.optimizers, name)(learning_rate=0.0625, **settings)
    optimizer = compat_lso.LossScaleOptimizer(inner)
    optimizer.apply_gradients(zip(_gradients(a, 0), a, strict=True))
    before = [v.numpy().copy() for v in inner.variables]
    steps = int(optimizer.iterations.numpy())
    with pytest.raises(NotShareable, match=rf"{name} was built for other variables") as refused:
        optimizer.apply_gradients(zip(_gradients(b, 0), b, strict=True))
    assert why in str(refused.value)
    assert "optimizer.build(model_a.trainable_variables + model_b.trainable_variables)" in str(
        refused.value
    )
    after = [v.numpy() for v in inner.variables]  # nothing added, nothing changed
    assert len(after) == len(before)
    for got, expected in zip(after, before, strict=True):
        np.testing.assert_array_equal(got, expected)
    assert int(optimizer.iterations.numpy()) == steps
    optimizer.apply_gradients(zip(_gradients(a, 1), a, strict=True))  # model A trains on


@CHECKPOINT_REFUSES_OPTIMIZERS
def test_the_slots_added_for_another_model_are_checkpointed_and_restored(tmp_path):
    import keras

    a = _model_variables(1, [(3, 2), (2,)])
    b = _model_variables(2, [(2, 4), (4,)])
    optimizer = compat_lso.LossScaleOptimizer(keras.optimizers.Adam(learning_rate=0.0625))
    optimizer.apply_gradients(zip(_gradients(a, 0), a, strict=True))
    optimizer.apply_gradients(zip(_gradients(b, 0), b, strict=True))
    checkpoint = tf.train.Checkpoint(optimizer=optimizer)
    path = checkpoint.save(str(tmp_path / "ckpt"))
    saved = [v.numpy().copy() for v in optimizer.variables]
    for variable in optimizer.variables:
        variable.assign(tf.zeros_like(variable))
    checkpoint.restore(path).assert_consumed()
    assert len(saved) == len(optimizer.variables)
    for got, expected in zip(optimizer.variables, saved, strict=True):
        np.testing.assert_array_equal(got.numpy(), expected)
