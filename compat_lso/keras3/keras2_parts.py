"""Keras 3: parts of Keras 2's loss scale optimizer that the Keras 3 class puts back.

Attributes. Keras 2 delegated the clipping settings (TF 2.4's wrapper, and TF 2.15's of an
OptimizerV2) and `use_ema`, `ema_momentum` (TF 2.11-2.15's wrapper of a new optimizer) to the
inner optimizer, the one that applies them; set on Keras 3's wrapper alone they silently do
nothing. (Set after a traced step, the shim warns: `keras2_surface`.)

Checkpoints. Keras 2's loss scale optimizer delegated checkpoint tracking to its inner optimizer
(`DelegatingTrackableMixin`): a checkpoint holds the inner optimizer's variables under the keys
a plain optimizer's checkpoint uses (`optimizer/_iterations`, `optimizer/_variables/N`, ...),
and the loss scale beside them. So a checkpoint moves between a plain optimizer and a loss scale
optimizer both ways: a float32 run resumes under mixed precision, and back. Keras 3's own class
nests the inner optimizer under `optimizer/inner_optimizer/` instead, next to variables of the
wrapper's own with the same names, so neither direction works. `Keras2CheckpointLayout` writes
and reads Keras 2's layout; the loss scale is `dynamic_scale` and `step_counter` (Keras 3's
names, where `load_legacy_checkpoint` also puts Keras 2's `loss_scale/current_loss_scale`).

A checkpoint written by Keras 3's own class cannot be read into this layout by name (its
wrapper-level `_iterations` and `_variables` are the wrapper's, not the inner optimizer's): it
is refused with a ValueError that says how to read it, rather than restored into the wrong
variables.

Warnings. Keras 2 logged a warning when `apply_gradients` ran without `get_scaled_loss` and
`get_unscaled_gradients` having been called (`_maybe_warn_about_scaling`), in these words.
"""

from __future__ import annotations

from typing import Any

from tensorflow.python.platform import tf_logging  # Keras 2 logged through it, as here

_NATIVE_LAYOUT_MESSAGE = (
    "This checkpoint was written by Keras 3's own keras.optimizers.LossScaleOptimizer, which "
    "keeps its inner optimizer's variables under 'inner_optimizer'. "
    "compat_lso.LossScaleOptimizer checkpoints them under the keys of a plain optimizer, as "
    "Keras 2 did, so the two layouts do not match by name. Read it with "
    "tf.train.Checkpoint(optimizer=tf.train.Checkpoint(inner_optimizer=opt.inner_optimizer, "
    "dynamic_scale=opt.dynamic_scale, step_counter=opt.step_counter), ...), where opt is the "
    "compat_lso.LossScaleOptimizer (leave out the last two for dynamic=False)."
)


def delegated_to_inner(name: str, default: Any) -> property:
    """An attribute read from and written to the inner optimizer.

    Keras 3's constructor sets these before the inner optimizer is attached: nothing to
    delegate then, and reading gives Keras's default.
    """

    def read(self: Any) -> Any:
        inner = self.__dict__.get("inner_optimizer")
        return default if inner is None else getattr(inner, name)

    def write(self: Any, value: Any) -> None:
        inner = self.__dict__.get("inner_optimizer")
        if inner is not None:
            setattr(inner, name, value)

    return property(read, write, doc=f"The inner optimizer's `{name}`.")


class Keras2CheckpointLayout:
    """Mixin for the Keras 3 class: Keras 2's checkpoint layout (see the module docstring)."""

    inner_optimizer: Any
    _dynamic: bool
    dynamic_scale: Any
    step_counter: Any

    def _trackable_children(self, save_type: Any = "checkpoint", **kwargs: Any) -> dict[str, Any]:
        children: dict[str, Any] = dict(
            self.inner_optimizer._trackable_children(save_type, **kwargs)
        )
        if self._dynamic:
            children["dynamic_scale"] = self.dynamic_scale
            children["step_counter"] = self.step_counter
        return children

    def _lookup_dependency(self, name: str, cached_dependencies: Any = None) -> Any:
        # TensorFlow passes `cached_dependencies` (this object's `_trackable_children()`) when
        # it matches a checkpoint's children; Keras's own attribute tracking passes none.
        if cached_dependencies is not None and name == "inner_optimizer":
            raise ValueError(_NATIVE_LAYOUT_MESSAGE)
        return super()._lookup_dependency(name, cached_dependencies)  # type: ignore[misc]


_EXAMPLE_CODE = """
    with tf.GradientTape() as tape:
      loss = loss_fn()
      scaled_loss = opt.get_scaled_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, vars)
    grads = opt.get_unscaled_gradients(scaled_grads)
    opt.apply_gradients([(grads, var)])"""
_MORE = (
    f"For example:{_EXAMPLE_CODE}\nFor more information, see "
    "https://www.tensorflow.org/api_docs/python/tf/keras/mixed_precision/LossScaleOptimizer"
)


def warn_about_scaling(loss_has_been_scaled: bool, gradients_have_been_unscaled: bool) -> None:
    """Keras 2's `_maybe_warn_about_scaling` (keras/mixed_precision/loss_scale_optimizer.py)."""
    if loss_has_been_scaled and gradients_have_been_unscaled:
        return
    if not loss_has_been_scaled and not gradients_have_been_unscaled:
        tf_logging.warning(
            "You forgot to call LossScaleOptimizer.get_scaled_loss() and "
            "LossScaleOptimizer.get_unscaled_gradients() before calling "
            "LossScaleOptimizer.apply_gradients(). This will likely result in worse model "
            "quality, so please call them in the correct places! " + _MORE
        )
    elif not loss_has_been_scaled:
        tf_logging.warning(
            "You forgot to call LossScaleOptimizer.get_scaled_loss() before calling "
            "LossScaleOptimizer.apply_gradients() (you did call get_unscaled_gradients() "
            "however). This will likely result in worse model quality, so please call "
            "get_scaled_loss() in the correct place! " + _MORE
        )
    else:
        tf_logging.warning(
            "You forgot to call LossScaleOptimizer.get_unscaled_gradients() before calling "
            "LossScaleOptimizer.apply_gradients() (you did call get_scaled_loss() however). "
            "This will likely result in worse model quality, so please call "
            "get_unscaled_gradients() in the correct place! " + _MORE
        )
