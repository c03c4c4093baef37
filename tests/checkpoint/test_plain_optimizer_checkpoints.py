"""A checkpoint moves between a plain optimizer and a loss scale optimizer, both ways.

TF 2.4 (Keras 2) checkpointed a loss scale optimizer's inner optimizer under the keys a plain
optimizer uses, so a float32 run resumes under mixed precision and back. Upstream's
`testCheckpoint` checks this on Keras 2, but on Keras 3 its plain half cannot run (a plain
Keras 3 optimizer has no `minimize`); these tests check it on every backend with
`apply_gradients`, against the same training continued without a checkpoint. On Keras 2 the
native class runs too, as the reference.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import compat_lso
from tests.shim.backend import IS_KERAS_3, NATIVE_LSO

GRADIENTS = ([1.0, -2.0], [0.5, 4.0], [-1.0, 1.0])


def _classes():
    classes = [pytest.param(compat_lso.LossScaleOptimizer, id="compat")]
    if not IS_KERAS_3:
        classes.append(pytest.param(NATIVE_LSO, id="native"))
    return classes


def _sgd():
    return tf.keras.optimizers.SGD(0.1, momentum=0.9)


def _step(optimizer, var, gradient):
    optimizer.apply_gradients([(tf.constant(gradient), var)])


def _state(optimizer, var):
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    return (
        var.numpy().tolist(),
        int(inner.iterations.numpy()),
        [m.numpy().tolist() for m in inner.momentums],
    )


def _train(optimizer, steps):
    var = tf.Variable([1.0, 2.0])
    for gradient in steps:
        _step(optimizer, var, gradient)
    return var


def _save(tmp_path, optimizer, var):
    return tf.train.Checkpoint(optimizer=optimizer, var=var).save(str(tmp_path / "ckpt"))


@pytest.mark.parametrize("lso_cls", _classes())
@pytest.mark.parametrize("dynamic", [True, False], ids=["dynamic", "fixed"])
def test_a_plain_optimizer_checkpoint_resumes_under_a_loss_scale_optimizer(
    tmp_path, lso_cls, dynamic
):
    plain = _sgd()
    var = _train(plain, GRADIENTS[:2])
    path = _save(tmp_path, plain, var)
    _step(plain, var, GRADIENTS[2])  # the run continued without a checkpoint

    arguments = {} if dynamic else {"dynamic": False, "initial_scale": 8.0}
    resumed = lso_cls(_sgd(), **arguments)
    resumed_var = tf.Variable([0.0, 0.0])
    status = tf.train.Checkpoint(optimizer=resumed, var=resumed_var).restore(path)
    status.assert_nontrivial_match()
    _step(resumed, resumed_var, GRADIENTS[2])  # slots are restored when this step makes them

    assert _state(resumed, resumed_var) == _state(plain, var)
    assert float(resumed.loss_scale) == (2.0**15 if dynamic else 8.0)


@pytest.mark.parametrize("lso_cls", _classes())
def test_a_loss_scale_optimizer_checkpoint_resumes_under_a_plain_optimizer(tmp_path, lso_cls):
    scaled = lso_cls(_sgd(), initial_scale=4.0, dynamic_growth_steps=2)
    var = _train(scaled, GRADIENTS[:2])
    path = _save(tmp_path, scaled, var)
    _step(scaled, var, GRADIENTS[2])

    plain = _sgd()
    plain_var = tf.Variable([0.0, 0.0])
    plain.build([plain_var])
    status = tf.train.Checkpoint(optimizer=plain, var=plain_var).restore(path)
    status.assert_existing_objects_matched()
    _step(plain, plain_var, GRADIENTS[2])

    assert _state(plain, plain_var) == _state(scaled, var)


@pytest.mark.parametrize("lso_cls", _classes())
def test_a_loss_scale_optimizer_checkpoint_restores_the_loss_scale(tmp_path, lso_cls):
    scaled = lso_cls(_sgd(), initial_scale=4.0, dynamic_growth_steps=2)
    var = _train(scaled, [GRADIENTS[0], [np.inf, 0.0], GRADIENTS[1]])  # scale 4 -> 2, count 1
    path = _save(tmp_path, scaled, var)

    restored = lso_cls(_sgd(), initial_scale=4.0, dynamic_growth_steps=2)
    restored_var = tf.Variable([0.0, 0.0])
    tf.train.Checkpoint(optimizer=restored, var=restored_var).restore(path)
    _step(restored, restored_var, GRADIENTS[2])
    _step(scaled, var, GRADIENTS[2])

    assert _state(restored, restored_var) == _state(scaled, var)
    assert float(restored.loss_scale) == float(scaled.loss_scale) == 4.0  # grew back
    assert int(restored.dynamic_counter.numpy()) == 0


@pytest.mark.skipif(not IS_KERAS_3, reason="Keras 3's own LossScaleOptimizer exists on Keras 3")
def test_a_keras_3_native_checkpoint_is_refused_by_name_and_read_by_its_layout(tmp_path):
    native = tf.keras.mixed_precision.LossScaleOptimizer(_sgd(), initial_scale=4.0)
    var = tf.Variable([1.0, 2.0])
    native.build([var])
    for gradient in GRADIENTS[:2]:
        native.apply([tf.constant(gradient) * 4.0], [var])  # Keras 3 takes scaled gradients
    path = _save(tmp_path, native, var)

    opt = compat_lso.LossScaleOptimizer(_sgd(), initial_scale=4.0)
    opt.build([var])
    with pytest.raises(ValueError, match="written by Keras 3's own"):
        tf.train.Checkpoint(optimizer=opt, var=tf.Variable([0.0, 0.0])).restore(path)

    # The layout the message gives reads it.
    restored_var = tf.Variable([0.0, 0.0])
    layout = tf.train.Checkpoint(
        inner_optimizer=opt.inner_optimizer,
        dynamic_scale=opt.dynamic_scale,
        step_counter=opt.step_counter,
    )
    tf.train.Checkpoint(optimizer=layout, var=restored_var).restore(path)
    assert _state(opt, restored_var) == _state(native, var)
    assert float(opt.loss_scale) == float(native.dynamic_scale.numpy())
