"""What Keras 2's loss scale optimizer did around its inner optimizer, on every backend.

Each test runs against compat_lso's class and, on Keras 2, against Keras's own class (the
reference): the inner optimizer's own `apply_gradients` runs, clipping set on the wrapper is the
inner optimizer's, unsupported strategies are refused, and a missing `get_scaled_loss` is warned
about.
"""

from __future__ import annotations

from unittest import mock

import pytest
import tensorflow as tf
from tensorflow.python.platform import tf_logging

from tests.shim.conftest import LEGACY_SGD


def _logging_sgd_class():
    class LoggingSGD(tf.keras.optimizers.SGD):
        """An optimizer that overrides apply_gradients, as users did to log or transform."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.received = []

        def apply_gradients(self, grads_and_vars, *args, **kwargs):
            grads_and_vars = list(grads_and_vars)
            self.received.append([type(g) for g, _ in grads_and_vars])
            return super().apply_gradients(grads_and_vars, *args, **kwargs)

    return LoggingSGD


@pytest.mark.parametrize("dynamic", [True, False], ids=["dynamic", "fixed"])
def test_the_inner_optimizers_apply_gradients_override_runs(
    lso_cls, maybe_tf_function, use_tf_function, dynamic
):
    inner = _logging_sgd_class()(1.0)
    arguments = {} if dynamic else {"dynamic": False, "initial_scale": 4.0}
    optimizer = lso_cls(inner, **arguments)
    var = tf.Variable([5.0])
    step = maybe_tf_function(lambda: optimizer.apply_gradients([(tf.constant([2.0]), var)]))
    step()
    assert inner.received, "the inner optimizer's apply_gradients was not called"
    # Called once eagerly; in tf.function once per trace, which Keras 2 may do twice.
    assert len(inner.received) == 1 or use_tf_function
    assert all(issubclass(kind, tf.Tensor) for kinds in inner.received for kind in kinds)
    assert var.numpy().tolist() == [3.0]


@pytest.mark.parametrize("setting", ["clipnorm", "global_clipnorm", "clipvalue"])
def test_clipping_set_on_the_wrapper_clips_the_step(lso_cls, setting):
    # TF 2.4's class delegated these (its optimizers were OptimizerV2); Keras 2.11-2.15 kept that
    # for legacy inner optimizers only (its new-optimizer class ignores them: not tested here).
    inner = (LEGACY_SGD or tf.keras.optimizers.SGD)(1.0)
    optimizer = lso_cls(inner, dynamic=False, initial_scale=1.0)
    setattr(optimizer, setting, 0.5)
    assert getattr(inner, setting) == getattr(optimizer, setting) == 0.5
    var = tf.Variable([5.0])
    optimizer.apply_gradients([(tf.constant([4.0]), var)])
    assert var.numpy().tolist() == [4.5]  # the gradient 4 was clipped to 0.5


def test_central_storage_strategy_is_refused_with_keras_2s_message(lso_cls):
    strategy = tf.distribute.experimental.CentralStorageStrategy()
    message = (
        "Loss scaling is not supported with the tf.distribute.Strategy: CentralStorageStrategy. "
        "Try using a different Strategy, e.g. a MirroredStrategy"
    )
    with strategy.scope(), pytest.raises(ValueError, match=message):
        lso_cls(tf.keras.optimizers.SGD())
    optimizer = lso_cls(tf.keras.optimizers.SGD())  # made outside, used inside: refused there
    with strategy.scope():
        var = tf.Variable(1.0)
        with pytest.raises(ValueError, match=message):
            strategy.run(lambda: optimizer.apply_gradients([(tf.constant(1.0), var)]))


@pytest.mark.parametrize(
    "calls, expected",
    [
        ((), "You forgot to call LossScaleOptimizer.get_scaled_loss() and "),
        (("get_scaled_loss",), "You forgot to call LossScaleOptimizer.get_unscaled_gradients()"),
        (("get_unscaled_gradients",), "You forgot to call LossScaleOptimizer.get_scaled_loss() "),
        (("get_scaled_loss", "get_unscaled_gradients"), None),
    ],
    ids=["neither", "no-unscaling", "no-scaling", "both"],
)
def test_apply_gradients_warns_when_the_tf_24_calls_are_missing(lso_cls, calls, expected):
    optimizer = lso_cls(tf.keras.optimizers.SGD())
    var = tf.Variable(1.0)
    with mock.patch.object(tf_logging, "warning") as warning:
        if "get_scaled_loss" in calls:
            optimizer.get_scaled_loss(tf.constant(1.0))
        if "get_unscaled_gradients" in calls:
            optimizer.get_unscaled_gradients([tf.constant(1.0)])
        optimizer.apply_gradients([(tf.constant(1.0), var)])
    messages = [call.args[0] for call in warning.call_args_list]
    if expected is None:
        assert messages == []
    else:
        assert len(messages) == 1 and messages[0].startswith(expected)


def test_model_fit_does_not_warn(lso_cls):
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=lso_cls(tf.keras.optimizers.SGD()), loss="mse")
    with mock.patch.object(tf_logging, "warning") as warning:
        model.fit(tf.ones((4, 2)), tf.zeros((4, 1)), batch_size=2, verbose=0)
    assert not [c for c in warning.call_args_list if "You forgot to call" in str(c.args[0])]
