"""Keras 2's update rule on Keras 3: skip a step with non-finite gradients, and the scale's update.

Keras 3's dynamic update has no floor (1 -> 0.5), doubles without an overflow check, and a
skipped step does not advance `iterations`. Here the update is Keras 2's: the scale never drops
below 1, never doubles to inf, and a skipped step still counts as an iteration. Keras 3's
`apply_gradients` takes *scaled* gradients and divides them; in the TF 2.4 API it takes
gradients that `get_unscaled_gradients` already divided. `Model.fit` calls `scale_loss` before
`apply_gradients`, so gradients are divided exactly as Keras 3 does when `scale_loss` ran since
the last apply, and are taken as they are otherwise. One optimizer trains several models, as in
Keras 2: a variable it was not built for gets its slots at its first step (`shared_optimizer.py`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import keras
import tensorflow as tf
from packaging.version import Version

from compat_lso.core.keras_version import keras_version
from compat_lso.keras3.native import NativeLossScaleOptimizer, OptimizerMixin
from compat_lso.keras3.shared_optimizer import add_unseen_variables

# Keras 3.10 (keras-team/keras#21193) leaves undivided the gradient of a variable that is
# overwritten with its gradient (`overwrite_with_gradient`, float8 training's scales); before,
# the native class divided every gradient.
if keras_version() >= Version("3.10"):

    def _divided_by_keras_3(variable: Any) -> bool:
        return not getattr(variable, "overwrite_with_gradient", False)

else:

    def _divided_by_keras_3(variable: Any) -> bool:
        return True


class Keras2UpdateRule(OptimizerMixin):  # type: ignore[misc,valid-type]
    """`scale_loss` / `apply` with Keras 2's rule, for `compat_lso.keras3.optimizer`'s class."""

    def scale_loss(self, loss: Any) -> Any:
        # Keras 3's API, which `Model.fit` calls: the next gradients `apply` sees in this thread
        # are scaled and are divided there, as Keras 3 divides them.
        _scaled_by_keras_3_api().add(self)
        self._loss_has_been_scaled = self._gradients_have_been_unscaled = True
        scale = self.dynamic_scale if self._dynamic else self.initial_scale
        return keras.ops.multiply(loss, scale)

    def apply(self, grads: Sequence[Any], trainable_variables: Sequence[Any] | None = None) -> None:
        if tf.distribute.in_cross_replica_context():
            raise ValueError("apply() must be called in a replica context.")
        grads = list(grads)
        if tf.inside_function():
            # The inner optimizer's hyperparameters are baked into this trace: an assignment from
            # now on warns (`keras2_surface.Keras2OptimizerSurface.__setattr__`).
            self._traced_a_step = True
        if not self.built:  # type: ignore[has-type]
            # Built outside the traced step (init_scope), as Keras 2 created its slots: Keras 3
            # creates them in the first step's graph, and under MirroredStrategy with several
            # replicas that step then fails ("You must feed a value for placeholder tensor
            # ... cond"; keras-team/keras#19246, #18666), which TF official models' loop hits.
            with tf.init_scope(), keras.name_scope(self.name, caller=self):
                self.build(trainable_variables)  # type: ignore[arg-type]  # None: as Keras 3 does
            self.built = True
        elif trainable_variables is not None:
            # Another model's variables, which Keras 2 trained on the same optimizer.
            with tf.init_scope():
                add_unseen_variables(self.inner_optimizer, trainable_variables)
                add_unseen_variables(self, trainable_variables)
        # After `scale_loss` the gradients are scaled: divided where the step is applied, as
        # Keras 3 divides them (whether a gradient is finite does not change by the division).
        scaled = self in _scaled_by_keras_3_api()
        _scaled_by_keras_3_api().discard(self)
        if not self._dynamic:
            self._apply_inner(grads, trainable_variables, scaled)
            return

        if tf.__internal__.distribute.strategy_supports_no_merge_call():
            self._apply_or_skip(
                _all_finite(grads), lambda: self._apply_inner(grads, trainable_variables, scaled)
            )
        else:
            # The inner optimizer's update calls `merge_call`, which cannot run inside a
            # `tf.cond` in replica context: decide once in cross-replica context, as Keras does.
            tf.distribute.get_replica_context().merge_call(
                self._apply_in_cross_replica_context, args=(grads, trainable_variables, scaled)
            )

    def _apply_in_cross_replica_context(
        self,
        distribution: tf.distribute.Strategy,
        grads: Any,
        trainable_variables: Any,
        scaled: bool,
    ) -> None:
        # Keras 3 all-reduces inside the inner optimizer, so these are each replica's own
        # gradients: the step applies only if every replica's are finite, so that all replicas
        # skip together and the scale halves once. Counted over all replicas in sync, not only
        # this worker's (`experimental_local_results`): under MultiWorkerMirroredStrategy a
        # worker that decided alone would wait forever in an all-reduce the others skipped.
        nonfinite_per_replica = distribution.extended.call_for_each_replica(
            _count_nonfinite, args=(grads,)
        )
        nonfinite = distribution.reduce(
            tf.distribute.ReduceOp.SUM, nonfinite_per_replica, axis=None
        )

        def apply_step() -> None:
            distribution.extended.call_for_each_replica(
                self._apply_inner, args=(grads, trainable_variables, scaled)
            )

        self._apply_or_skip(tf.equal(nonfinite, 0.0), apply_step)

    def _apply_inner(
        self, grads: list[Any], trainable_variables: Sequence[Any] | None, scaled: bool
    ) -> None:
        if scaled:
            grads = self._divide_like_keras_3(grads, trainable_variables)
        # Through the inner optimizer's `apply_gradients`, as Keras 2 called it: an optimizer
        # that overrides it (to log, or to transform gradients) keeps working.
        if trainable_variables is None:
            self.inner_optimizer.apply(grads)
        else:
            self.inner_optimizer.apply_gradients(list(zip(grads, trainable_variables, strict=True)))

    def _apply_or_skip(self, grads_are_finite: tf.Tensor, apply_step: Callable[[], None]) -> None:
        """Keras 2's dynamic update (keras/src/mixed_precision/loss_scale_optimizer.py), decided
        by one `tf.cond`: apply the step and count it, or skip it and halve the scale.

        Keras 2 nests a second `tf.cond` for growth; here growth is `tf.where`, same values bit
        for bit: after `dynamic_growth_steps` good steps the scale doubles unless that gives inf,
        and the count restarts. A skipped step halves the scale, never below 1, restarts the
        count, and still advances `iterations`.
        """
        scale, counter = self.dynamic_scale, self.step_counter

        def apply_and_count() -> None:
            apply_step()
            counted = counter + 1
            grow = counted >= self.dynamic_growth_steps
            doubled = scale * 2.0
            scale.assign(tf.where(tf.logical_and(grow, tf.math.is_finite(doubled)), doubled, scale))
            counter.assign(tf.where(grow, tf.zeros_like(counted), counted))

        def skip_and_halve() -> None:
            counter.assign(0)
            scale.assign(tf.maximum(scale / 2.0, 1.0))
            self._count_skipped_step()

        _cond(grads_are_finite, apply_and_count, skip_and_halve)

    def _count_skipped_step(self) -> None:
        # The inner optimizer counts the steps it applies; Keras 2 also counts skipped ones.
        self.inner_optimizer.iterations.assign_add(1)

    def build(self, var_list: Sequence[Any]) -> None:
        if not self.inner_optimizer.built:
            self.inner_optimizer.build(var_list)
        # Skip Keras 3's LossScaleOptimizer.build: it would create a second scale and counter.
        super(NativeLossScaleOptimizer, self).build(var_list)

    def _divide_like_keras_3(
        self, grads: list[Any], trainable_variables: Sequence[Any] | None
    ) -> list[Any]:
        # Keras 3's own unscaling, op for op, so `Model.fit` trains bit for bit as it does.
        scale = self.dynamic_scale if self._dynamic else self.initial_scale
        variables = trainable_variables or self._trainable_variables
        return [
            keras.ops.divide(g, scale) if g is not None and _divided_by_keras_3(v) else g
            for g, v in zip(grads, variables, strict=False)
        ]


# Which optimizers had `scale_loss` called since their last `apply`, per thread: under
# MirroredStrategy each replica's step runs in a thread of its own, and one replica's
# `scale_loss` must be paired with that replica's `apply`.
_thread_state = threading.local()


def _scaled_by_keras_3_api() -> weakref.WeakSet[Any]:
    pending = getattr(_thread_state, "pending", None)
    if pending is None:
        pending = _thread_state.pending = weakref.WeakSet()
    return pending


def _cond(predicate: tf.Tensor, true_fn: Callable[[], None], false_fn: Callable[[], None]) -> None:
    """`tf.cond` for branches run for their effects (eagerly, only the taken branch runs)."""
    tf.cond(predicate, true_fn, false_fn)


def _all_finite(grads: Sequence[Any]) -> tf.Tensor:
    checks = [
        tf.reduce_all(tf.math.is_finite(g.values if isinstance(g, tf.IndexedSlices) else g))
        for g in grads
        if g is not None
    ]
    # Stacked first: a tensor of known rank reduces over a constant axis (no Range op).
    return tf.reduce_all(tf.stack(checks)) if checks else tf.constant(True)


def _count_nonfinite(grads: Sequence[Any]) -> tf.Tensor:
    """1.0 if any gradient has an inf or nan, else 0.0: a float32, which every all-reduce sums."""
    return tf.cast(tf.logical_not(_all_finite(grads)), tf.float32)
