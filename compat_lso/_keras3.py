"""Keras 3 (`tf.keras` on TF >= 2.16): TF 2.4 semantics on top of Keras 3's own class.

Subclassing Keras 3's `LossScaleOptimizer` keeps Keras's isinstance checks true (`compile()`
does not wrap it again under `mixed_float16`). What Keras 3 changed, and what this class puts
back:

- Fixed loss scaling (`dynamic=False`) is gone from Keras 3: here it applies every step at a
  constant scale, as in Keras 2.
- Keras 3's dynamic update has no floor (1 -> 0.5), doubles without an overflow check, and a
  skipped step does not advance `iterations`. Here the update is Keras 2's: the scale never
  drops below 1, never doubles to inf, and a skipped step still counts as an iteration.
- Keras 3's `apply_gradients` takes *scaled* gradients and divides them; in the TF 2.4 API it
  takes gradients that `get_unscaled_gradients` already divided. Both callers are served:
  `Model.fit` calls `scale_loss` before `apply_gradients`, so gradients are divided exactly as
  Keras 3 does when `scale_loss` ran since the last apply, and are taken as they are otherwise.
- `get_scaled_loss`, `get_unscaled_gradients`, `minimize`, `dynamic`, `loss_scale` and
  `dynamic_counter` are back.
- Keras 3 makes optimizer names unique (`sgd`, `sgd_1`), so equal constructions had unequal
  configs. `get_config()` writes the TF 2.4 form, leaving out names Keras generated.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import keras
import tensorflow as tf
from keras.src.utils.naming import to_snake_case
from packaging.version import Version

from compat_lso import _arguments, _backend, _config
from compat_lso._keras3_support import (
    Keras2CheckpointLayout,
    delegated_to_inner,
    warn_about_scaling,
)

NativeLossScaleOptimizer = keras.optimizers.LossScaleOptimizer
OPTIMIZER_TYPES = (keras.optimizers.Optimizer,)
register_serializable = keras.saving.register_keras_serializable
get_custom_objects = keras.saving.get_custom_objects  # the registry itself, documented as such

# -- Where Keras 3 releases differ (TF 2.16 accepts Keras 3.0 and later) ----------------------

# Keras 3.7 (keras-team/keras#20541) accepts `aggregation="none"`, which the native class has
# passed for its scale and counter since. Keras 3.0-3.1 have no `aggregation` argument, 3.2-3.6
# refuse "none"; their native class passes none, and so does the shim there.
if _backend.keras_version() >= Version("3.7"):
    _NOT_AGGREGATED: dict[str, str] = {"aggregation": "none"}
else:
    _NOT_AGGREGATED = {}

# Keras 3.10 (keras-team/keras#21193) leaves undivided the gradient of a variable that is
# overwritten with its gradient (`overwrite_with_gradient`, float8 training's scales); before,
# the native class divided every gradient.
if _backend.keras_version() >= Version("3.10"):

    def _divided_by_keras_3(variable: Any) -> bool:
        return not getattr(variable, "overwrite_with_gradient", False)

else:

    def _divided_by_keras_3(variable: Any) -> bool:
        return True


# Keras 3.1 (keras-team/keras#19263, int8 quantization) made `DTypePolicy` a base that parses no
# name (a subclass computed in float32, whatever its name), put the parsing in `FloatDTypePolicy`
# and gave `DTypePolicy` a `__new__(cls, name)` that refuses a subclass's other arguments (Keras
# 3.3's takes them); Keras 3.4 (keras-team/keras#19711) merged the two classes back.
if Version("3.1") <= _backend.keras_version() < Version("3.4"):

    class DTypePolicy(keras.dtype_policies.FloatDTypePolicy):  # type: ignore[misc,name-defined]
        """`FloatDTypePolicy` whose subclasses may take more arguments than the name."""

        def __new__(cls, name: str, *args: Any, **kwargs: Any) -> Any:
            return super().__new__(cls, name)

else:
    DTypePolicy = keras.mixed_precision.DTypePolicy  # type: ignore[misc]

# Keras 2 optimizer config keys that Keras 3 optimizers reject. A nonzero `decay` has no
# Keras 3 equivalent other than a learning-rate schedule, so only its default is dropped.
_KERAS_2_ONLY_OPTIMIZER_KEYS = ("is_legacy_optimizer", "jit_compile")


@register_serializable("compat_lso", "LossScaleOptimizer")
class LossScaleOptimizer(Keras2CheckpointLayout, NativeLossScaleOptimizer):  # type: ignore[misc,valid-type]
    """TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer`, on this Keras generation.

    Args:
        inner_optimizer: the optimizer to wrap.
        dynamic: whether the loss scale changes during training (must be a bool).
        initial_scale: the starting loss scale (default 2**15), or with `dynamic=False` the
            fixed one (then required). A positive finite number.
        dynamic_growth_steps: with `dynamic=True`, the scale doubles after this many steps
            with finite gradients (default 2000). A positive int; None with `dynamic=False`.

    An instance of the backend's native `LossScaleOptimizer`. Dynamic scaling follows Keras 2's
    rule: a step with non-finite gradients is skipped and halves the scale (never below 1).
    """

    def __init__(
        self,
        inner_optimizer: Any,
        dynamic: bool = True,
        initial_scale: float | None = None,
        dynamic_growth_steps: int | None = None,
        name: str | None = None,
    ) -> None:
        _arguments.check_inner_optimizer(inner_optimizer, OPTIMIZER_TYPES, NativeLossScaleOptimizer)
        resolved = _arguments.resolve(dynamic, initial_scale, dynamic_growth_steps)
        super().__init__(
            inner_optimizer,
            initial_scale=resolved.initial_scale,
            dynamic_growth_steps=resolved.dynamic_growth_steps,
            name=name,
        )
        self._dynamic = resolved.dynamic
        self._name_was_given = name is not None
        # Keras 2's record of whether the TF 2.4 calls ran, for its warning in apply_gradients.
        self._loss_has_been_scaled = False
        self._gradients_have_been_unscaled = False
        inner_optimizer._is_wrapped_by_loss_scale_optimizer = True
        if self._dynamic:
            # Created here, not in `build()` as Keras 3 does, so that `loss_scale` and
            # `dynamic_counter` are variables from the start, as in Keras 2. Same names and
            # order as Keras 3's, so checkpoints and `.keras` files line up with the native class.
            self.step_counter = self.add_variable(
                shape=(), dtype="int", initializer="zeros", name="step_counter", **_NOT_AGGREGATED
            )
            self.dynamic_scale = self.add_variable(
                shape=(),
                dtype="float32",
                initializer=keras.initializers.Constant(self.initial_scale),
                name="dynamic_scale",
                **_NOT_AGGREGATED,
            )

    # Keras 3.9 (keras-team/keras#20901) made the native class's `iterations` the inner
    # optimizer's, as Keras 2's was. Before, it was the wrapper's own counter, which nothing
    # advances (Keras 3.0-3.4's constructor assigns it here, hence the setter).
    if _backend.keras_version() < Version("3.9"):

        @property
        def iterations(self) -> Any:
            inner = self.__dict__.get("inner_optimizer")
            return inner.iterations if inner is not None else self._iterations

        @iterations.setter
        def iterations(self, value: Any) -> None:
            if "inner_optimizer" in self.__dict__:  # as read-only as Keras 3.9's
                raise AttributeError("`iterations` is the inner optimizer's: it cannot be set")
            self._iterations = value

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

    def scale_loss(self, loss: Any) -> Any:
        # Keras 3's API, which `Model.fit` calls: the next gradients `apply` sees in this thread
        # are scaled and are divided there, as Keras 3 divides them.
        _scaled_by_keras_3_api().add(self)
        self._loss_has_been_scaled = self._gradients_have_been_unscaled = True
        scale = self.dynamic_scale if self._dynamic else self.initial_scale
        return keras.ops.multiply(loss, scale)

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
                    tape.watch(
                        [
                            v.value if isinstance(v, keras.Variable) else v
                            for v in tf.nest.flatten(var_list)
                        ]
                    )
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

    def apply(self, grads: Sequence[Any], trainable_variables: Sequence[Any] | None = None) -> None:
        if tf.distribute.in_cross_replica_context():
            raise ValueError("apply() must be called in a replica context.")
        grads = list(grads)
        if not self.built:  # type: ignore[has-type]
            with keras.name_scope(self.name, caller=self):
                self.build(trainable_variables)  # type: ignore[arg-type]  # None: as Keras 3 does
            self.built = True
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

    # -- Config --------------------------------------------------------------------------

    def get_config(self) -> dict[str, Any]:
        """The TF 2.4 form: inner_optimizer, dynamic, initial_scale, dynamic_growth_steps."""
        config: dict[str, Any] = {
            "inner_optimizer": _serialize_without_generated_name(self.inner_optimizer),
            "dynamic": self._dynamic,
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }
        if self._name_was_given:
            config["name"] = self.name
        return config

    @classmethod
    def from_config(
        cls, config: dict[str, Any], custom_objects: dict[str, Any] | None = None
    ) -> Any:
        """Build one from a config in any historical form (TF 2.1-2.3, TF 2.4-2.15, Keras 3)."""
        normalized = _config.read(config)
        inner_optimizer = deserialize_inner_optimizer(
            normalized.pop("inner_optimizer"), custom_objects
        )
        return cls._from_resolved_config(inner_optimizer, normalized)

    @classmethod
    def _from_resolved_config(cls, inner_optimizer: Any, arguments: dict[str, Any]) -> Any:
        return cls(inner_optimizer, **arguments)


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


def _multiply_gradient(gradient: Any, scale: tf.Tensor) -> Any:
    scale = tf.cast(scale, gradient.dtype)
    if isinstance(gradient, tf.IndexedSlices):
        return tf.IndexedSlices(
            gradient.values * scale, gradient.indices, dense_shape=gradient.dense_shape
        )
    return gradient * scale


def _serialize_without_generated_name(optimizer: Any) -> dict[str, Any]:
    serialized: dict[str, Any] = keras.saving.serialize_keras_object(optimizer)
    inner_config = serialized.get("config")
    if isinstance(inner_config, dict) and "name" in inner_config:
        base_name = to_snake_case(type(optimizer).__name__)
        # Keras names an unnamed optimizer `sgd`, then `sgd_1`, `sgd_2`... in creation order.
        if re.fullmatch(re.escape(base_name) + r"(_\d+)?", str(inner_config["name"])):
            inner_config["name"] = base_name
    return serialized


def deserialize_inner_optimizer(serialized: Any, custom_objects: dict[str, Any] | None) -> Any:
    if isinstance(serialized, OPTIMIZER_TYPES):
        return serialized
    serialized = dict(serialized)
    inner_config = dict(serialized.get("config") or {})
    for key in _KERAS_2_ONLY_OPTIMIZER_KEYS:
        inner_config.pop(key, None)
    if "lr" in inner_config:  # the TF 2.0-era spelling
        inner_config.setdefault("learning_rate", inner_config.pop("lr"))
        inner_config.pop("lr", None)
    decay = inner_config.pop("decay", 0.0)
    if decay:
        raise ValueError(
            f"The saved inner optimizer uses decay={decay}, which Keras 3 optimizers do not "
            "have. Replace it with a learning rate schedule, e.g. "
            "learning_rate=keras.optimizers.schedules.InverseTimeDecay(lr, 1, decay)."
        )
    serialized["config"] = inner_config
    return keras.optimizers.deserialize(serialized, custom_objects=custom_objects)


def install_time_names() -> Any:
    """What `compat_lso.install()` puts behind Keras 3's own `LossScaleOptimizer` names.

    Keras 2 backends have no such function: their native class already has TF 2.4's meaning.
    """
    from compat_lso import _keras3_install

    return _keras3_install
