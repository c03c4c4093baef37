"""The TF 2.4 surface that Keras 3's class lacks, put back on the shim's class.

`get_scaled_loss`, `get_unscaled_gradients`, `minimize`, `compute_gradients`, TF 2.4's
`apply_gradients` signature, `dynamic`, `loss_scale` and `dynamic_counter`; and the settings
Keras 2 delegated to the inner optimizer (`use_ema`, clipping).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tensorflow as tf

from compat_lso.core import arguments as _arguments
from compat_lso.keras3.keras2_parts import delegated_to_inner, warn_about_scaling
from compat_lso.keras3.native import OptimizerMixin
from compat_lso.keras3.update_rule import _scaled_by_keras_3_api


class TF24Surface(OptimizerMixin):  # type: ignore[misc,valid-type]
    """TF 2.4's methods and properties, for `compat_lso.keras3.optimizer`'s class."""

    _dynamic: bool  # set by the class's constructor

    # -- The TF 2.4 properties -----------------------------------------------------------

    @property
    def dynamic(self) -> bool:
        return self._dynamic

    @property
    def loss_scale(self) -> tf.Tensor:
        return self._current_loss_scale()

    def _current_loss_scale(self) -> tf.Tensor:
        # Internal reads go through here, not `loss_scale`, which the experimental class
        # overrides with TF 2.2's callable form.
        if self._dynamic:
            return tf.convert_to_tensor(self.dynamic_scale)
        return tf.constant(self.initial_scale, dtype=tf.float32)

    @property
    def dynamic_counter(self) -> Any:
        return self.step_counter if self._dynamic else None

    # Keras 2 delegated these to the inner optimizer, which is the one that applies them; set on
    # the wrapper alone (as Keras 3's own class does) they would silently do nothing.
    use_ema = delegated_to_inner("use_ema", False)
    ema_momentum = delegated_to_inner("ema_momentum", 0.99)
    clipnorm = delegated_to_inner("clipnorm", None)
    global_clipnorm = delegated_to_inner("global_clipnorm", None)
    clipvalue = delegated_to_inner("clipvalue", None)

    # -- Scaling -------------------------------------------------------------------------

    def get_scaled_loss(self, loss: Any) -> Any:
        """`loss` times the current loss scale (a callable `loss` gives a callable)."""
        _scaled_by_keras_3_api().discard(self)
        self._loss_has_been_scaled = True
        if callable(loss):

            def scaled_loss() -> tf.Tensor:
                value = tf.convert_to_tensor(loss())
                return value * tf.cast(self._current_loss_scale(), value.dtype)

            return scaled_loss
        loss = tf.convert_to_tensor(loss)
        return loss * tf.cast(self._current_loss_scale(), loss.dtype)

    def get_unscaled_gradients(self, grads: Iterable[Any]) -> list[Any]:
        """Each gradient divided by the current loss scale (None stays None)."""
        self._gradients_have_been_unscaled = True
        # Multiplying by the reciprocal, not dividing, is what Keras 2 does: same bits.
        reciprocal = 1.0 / self._current_loss_scale()
        return [None if g is None else _multiply_gradient(g, reciprocal) for g in grads]

    # -- Training ------------------------------------------------------------------------

    def minimize(self, loss: Any, var_list: Any, tape: tf.GradientTape | None = None) -> Any:
        """Minimize `loss` (a tensor with `tape`, or a callable) over `var_list`, TF 2.4 style."""
        grads_and_vars = self.compute_gradients(loss, var_list, tape=tape)
        return self.apply_gradients(grads_and_vars)

    def compute_gradients(
        self, loss: Any, var_list: Any, tape: tf.GradientTape | None = None
    ) -> list[tuple[Any, Any]]:
        """Gradients of `loss`, computed on the scaled loss and returned unscaled."""
        if not callable(loss) and tape is None:
            raise ValueError(
                "`tape` is required when a `Tensor` loss is passed to `minimize` or "
                "`compute_gradients`: pass `tape=` the tf.GradientTape that recorded `loss`, "
                "or pass `loss` as a callable."
            )
        tape = tf.GradientTape() if tape is None else tape
        with tape:
            if callable(loss):
                if not callable(var_list):
                    # tape.watch() takes TensorFlow variables only: a Keras 3 variable is
                    # watched through the tf.Variable it holds (`.value` on the TF backend).
                    # Not isinstance(v, keras.Variable): Keras 3.0's public keras.Variable is no
                    # base of the TF backend's variable class.
                    tape.watch([_backing_variable(v) for v in tf.nest.flatten(var_list)])
                loss = loss()
            scaled_loss = self.get_scaled_loss(loss)
        if callable(var_list):
            var_list = var_list()
        var_list = tf.nest.flatten(var_list)
        grads = tape.gradient(scaled_loss, var_list)
        return list(zip(self.get_unscaled_gradients(grads), var_list, strict=False))

    def apply_gradients(
        self,
        grads_and_vars: Iterable[tuple[Any, Any]],
        name: str | None = None,
        experimental_aggregate_gradients: bool = True,
        skip_gradients_aggregation: bool = False,
    ) -> Any:
        """Apply (unscaled) gradients: TF 2.4's signature, and Keras 2's new-optimizer keyword."""
        del name  # TF 2.4 used it for the op's name scope; Keras 3 names its own ops
        if tf.distribute.in_cross_replica_context():
            raise ValueError("apply_gradients() must be called in a replica context.")
        # Checked here too, as Keras 2 did: the optimizer is often made outside the strategy.
        _arguments.raise_if_strategy_unsupported()
        warn_about_scaling(self._loss_has_been_scaled, self._gradients_have_been_unscaled)
        if not experimental_aggregate_gradients or skip_gradients_aggregation:
            replica_context = tf.distribute.get_replica_context()
            if replica_context is not None and replica_context.num_replicas_in_sync > 1:
                raise ValueError(
                    "experimental_aggregate_gradients=False (skip_gradients_aggregation=True) "
                    "cannot be honoured on Keras 3, whose optimizers always sum gradients across "
                    "replicas themselves. Pass the per-replica gradients instead of all-reduced "
                    "ones, and drop the argument."
                )
        grads, trainable_variables = zip(*grads_and_vars, strict=False)
        self.apply(grads, trainable_variables)
        return self.iterations


def _multiply_gradient(gradient: Any, scale: tf.Tensor) -> Any:
    scale = tf.cast(scale, gradient.dtype)
    if isinstance(gradient, tf.IndexedSlices):
        return tf.IndexedSlices(
            gradient.values * scale, gradient.indices, dense_shape=gradient.dense_shape
        )
    return gradient * scale


def _backing_variable(variable: Any) -> Any:
    """The tf.Variable behind a Keras 3 variable (its `.value`), or `variable` itself."""
    backing = getattr(variable, "value", None)
    return backing if isinstance(backing, tf.Variable) else variable
