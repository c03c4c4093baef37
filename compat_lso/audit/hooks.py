"""The audit's hooks into the shim's Keras 3 class, in place only while the audit is on.

`install(audit)` replaces the methods named in `AUDITED` on the shim's Keras 3 class
(`compat_lso.keras3.optimizer.LossScaleOptimizer`), and `VariablesList.__call__` (Keras 2's
`opt.variables()`), with ones that record, then call the original; it returns what puts them
back. Off, the classes are exactly as written (no hook, no check, no operation). Each method is
looked up through the class's MRO, so a method that moves to a base class or mixin is still
found; a name that disappears fails loudly here (and in tests/old_code/test_audit.py), not
silently. On Keras 2, `install_keras2(audit)` wraps Keras 2's own `apply_gradients` alone: the
old code's own bug, gradients of a loss never scaled divided by the scale (`unscaled-twice`).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from compat_lso.core import keras2_forms

# Methods and properties that record; `_apply_or_skip` is Keras 2's dynamic update, one step.
AUDITED = (
    "__init__",
    "get_scaled_loss",
    "get_unscaled_gradients",
    "minimize",
    "get_gradients",
    "apply_gradients",
    "_apply_or_skip",
    "loss_scale",
    "dynamic_counter",
    # Keras 2 forms Keras 3's class accepts with another meaning (compat_lso/core/keras2_forms.py),
    # recorded only where the user's code uses them (Keras uses some of these names itself).
    "lr",
    *keras2_forms.DELEGATED,
    "set_weights",
    "__setattr__",
)


def install(audit: Any) -> list[Callable[[], None]]:
    from compat_lso.keras3 import keras2_surface
    from compat_lso.keras3 import optimizer as _keras3

    undo: list[Callable[[], None]] = []
    for cls, names in (
        (_keras3.LossScaleOptimizer, AUDITED),
        (keras2_surface.VariablesList, ("__call__",)),
    ):
        for name in names:
            original = getattr(cls, name)  # AttributeError: the shim lost what the audit wraps
            own = cls.__dict__.get(name)
            replacement = _REPLACEMENTS[name](audit, original)
            setattr(cls, name, replacement)
            undo.append(functools.partial(_put_back, cls, name, own))
    return undo


def install_keras2(audit: Any) -> list[Callable[[], None]]:
    """Keras 2 (TF <= 2.15, tf_keras): its own class runs, the meaning old code expects. Its
    `apply_gradients` (both concrete classes) records the old code's own bug, gradients of a
    loss never scaled divided by the scale, from Keras 2's own flags."""
    from compat_lso.keras2.optimizer import NativeLossScaleOptimizer

    module = sys.modules[NativeLossScaleOptimizer.__module__]
    undo: list[Callable[[], None]] = []
    for cls in (module.LossScaleOptimizer, module.LossScaleOptimizerV3):
        own = cls.__dict__.get("apply_gradients")
        original = cls.apply_gradients  # AttributeError: Keras 2 lost what the audit wraps
        cls.apply_gradients = _keras2_apply_gradients(audit, original)
        undo.append(functools.partial(_put_back, cls, "apply_gradients", own))
    return undo


def _keras2_apply_gradients(audit: Any, original: Any) -> Any:
    @functools.wraps(original)
    def apply_gradients(self: Any, *args: Any, **kwargs: Any) -> Any:
        audit.count_step()
        if self._gradients_have_been_unscaled and not self._loss_has_been_scaled:
            audit.record("unscaled-twice", None)
        return original(self, *args, **kwargs)

    return apply_gradients


def _put_back(cls: type, name: str, own: Any) -> None:
    if own is None:
        delattr(cls, name)
    else:
        setattr(cls, name, own)


def _init(audit: Any, original: Any) -> Any:
    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if not self._dynamic:
            audit.record("fixed-scale", None)

    return __init__


def _keras2_method(name: str) -> Callable[[Any, Any], Any]:
    def make(audit: Any, original: Any) -> Any:
        @functools.wraps(original)
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            audit.record("keras2-form", name)
            if name not in ("minimize", "get_gradients"):
                return original(self, *args, **kwargs)
            with audit.shim_internal():  # its own get_scaled_loss etc. are not the user's
                return original(self, *args, **kwargs)

        return method

    return make


def _used_by_user(name: str) -> Callable[[Any, Any], Any]:
    """A method, or a property read, that records `name` where the user's code uses it."""

    def make(audit: Any, original: Any) -> Any:
        if isinstance(original, property):

            def read(self: Any) -> Any:
                audit.record_access(name)
                return original.fget(self)  # type: ignore[misc]

            # Written through Keras's __setattr__, whose frames hide the user's: `_setattr`.
            return property(read, original.fset, original.fdel, original.__doc__)

        @functools.wraps(original)
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            audit.record_access(f"{name}()")
            return original(self, *args, **kwargs)

        return method

    return make


_WRITTEN = frozenset({"lr", *keras2_forms.DELEGATED})


def _setattr(audit: Any, original: Any) -> Any:
    """`opt.lr = x`, `opt.clipnorm = x`, and `opt.momentum = x` where the inner optimizer has a
    `momentum` (Keras 2's wrapper set such a hyperparameter on the inner optimizer, as the shim
    does; Keras 3's class has no attribute of that name)."""
    from compat_lso.keras3.keras2_surface import keras2_hyperparameter

    @functools.wraps(original)
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if name in _WRITTEN:
            audit.record_access(name)
        elif keras2_hyperparameter(self, name):
            audit.record_access(f"{name}=")
        original(self, name, value)

    return __setattr__


def _apply_gradients(audit: Any, original: Any) -> Any:
    @functools.wraps(original)
    def apply_gradients(self: Any, *args: Any, **kwargs: Any) -> Any:
        # Keras 2's own record of the calls (its warning reads the same flags): ever, per
        # optimizer. Keras 3's `scale_loss` sets both.
        audit.count_step()
        scaled, unscaled = self._loss_has_been_scaled, self._gradients_have_been_unscaled
        if not scaled and not unscaled:
            audit.record("unscaled-gradients", None)
        elif not scaled:
            audit.record("unscaled-twice", None)
        elif not unscaled:
            audit.record("scaled-never-unscaled", None)
        return original(self, *args, **kwargs)

    return apply_gradients


def _apply_or_skip(audit: Any, original: Any) -> Any:
    @functools.wraps(original)
    def apply_or_skip(self: Any, grads_are_finite: Any, apply_step: Any) -> None:
        import tensorflow as tf

        # Read before the update (automatic control dependencies keep the order in a graph).
        scale = tf.convert_to_tensor(self.dynamic_scale)
        counted = tf.convert_to_tensor(self.step_counter) + 1
        skipped = tf.logical_not(grads_are_finite)
        # Keras 2 halves to max(scale / 2, 1), Keras 3 to scale / 2: they differ below 2.
        floor = tf.logical_and(skipped, scale < 2.0)
        # Both double after `dynamic_growth_steps` finite steps; Keras 2 only to a finite value.
        refused = tf.logical_not(tf.math.is_finite(scale * 2.0))
        growth = tf.logical_and(grads_are_finite, counted >= self.dynamic_growth_steps)
        audit.record_all(
            [
                ("skipped-step", None, skipped),
                ("scale-floor", None, floor),
                ("growth-cap", None, tf.logical_and(growth, refused)),
            ]
        )
        original(self, grads_are_finite, apply_step)

    return apply_or_skip


_REPLACEMENTS: dict[str, Callable[[Any, Any], Any]] = {
    "__init__": _init,
    "get_scaled_loss": _keras2_method("get_scaled_loss"),
    "get_unscaled_gradients": _keras2_method("get_unscaled_gradients"),
    "minimize": _keras2_method("minimize"),
    "get_gradients": _keras2_method("get_gradients"),
    "apply_gradients": _apply_gradients,
    "_apply_or_skip": _apply_or_skip,
    # Read only where the user's code reads them: Keras's weight saving (ModelCheckpoint's
    # save_weights_only, save_weights, load_weights) reads every attribute of the optimizer.
    "loss_scale": _used_by_user("loss_scale"),
    "dynamic_counter": _used_by_user("dynamic_counter"),
    "lr": _used_by_user("lr"),
    **{name: _used_by_user(name) for name in keras2_forms.DELEGATED},
    "set_weights": _used_by_user("set_weights"),
    "__setattr__": _setattr,
    "__call__": _used_by_user("variables"),  # VariablesList: `opt.variables()`
}
