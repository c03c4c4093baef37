"""Keras 2 (`tf.keras` on TF <= 2.15, and tf_keras): the native classes already are TF 2.4.

Keras 2 exports `LossScaleOptimizer` as `BaseLossScaleOptimizer`, whose metaclass constructs one
of two concrete classes depending on the inner optimizer: `LossScaleOptimizer` for a legacy
`OptimizerV2`, `LossScaleOptimizerV3` for a new `optimizer.Optimizer`. Subclassing the exported
name and calling `super().__init__` fails, so the shim does what Keras does one level down: its
public class is abstract, and constructing it builds a subclass of the public class and of the
right concrete Keras class. Behaviour, state and checkpoint keys are Keras's own; the shim adds
argument checks that name the argument, and reads every historical config form.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any

import tensorflow as tf
from packaging.version import Version

from compat_lso.core import arguments as _arguments
from compat_lso.core import config as _config
from compat_lso.core import get_gradients as _get_gradients
from compat_lso.core.keras_version import keras_package, keras_version

_PACKAGE = keras_package().__name__  # "keras" (TF <= 2.15) or "tf_keras"

# Keras 2.13's wheel keeps the sources under `keras.src` (keras-team/keras@e2ce1cd802, "a pip
# package that only shows the public API"); Keras 2.12's has them at the top level. tf_keras
# starts at 2.15.
_SOURCES = f"{_PACKAGE}.src" if keras_version() >= Version("2.13") else _PACKAGE

# Private: the concrete classes and the metaclass that picks one have no public name.
_native = importlib.import_module(f"{_SOURCES}.mixed_precision.loss_scale_optimizer")
_saving = tf.keras.utils  # register_keras_serializable and friends, public since TF 2.1

NativeLossScaleOptimizer = _native.BaseLossScaleOptimizer
register_serializable = _saving.register_keras_serializable
get_custom_objects = _saving.get_custom_objects  # the registry itself, documented as such
LegacyOptimizer = tf.keras.optimizers.legacy.Optimizer  # OptimizerV2
NewOptimizer = tf.keras.optimizers.Optimizer  # Keras 2.11's new optimizer
OPTIMIZER_TYPES = (LegacyOptimizer, NewOptimizer)
# Keras 2's dtype policy; the experimental Policy subclasses it.
DTypePolicy = tf.keras.mixed_precision.Policy

# Keras-3-only optimizer config keys, found in configs saved by Keras 3. Keras 2 optimizers
# reject them, and their defaults mean "off".
_KERAS_3_ONLY_OPTIMIZER_KEYS = ("loss_scale_factor", "gradient_accumulation_steps")


class _ConstructConcreteClass(_native.LossScaleOptimizerMetaclass):  # type: ignore[misc,name-defined]
    """Construct `cls` as the subclass of `cls` and Keras's concrete class for the inner
    optimizer."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_public_class" in cls.__dict__:
            # A concrete class called directly (`type(opt)(...)`) is Keras's concrete class:
            # it takes its own kind of inner optimizer, and refuses the other as Keras does.
            return type.__call__(cls, *args, **kwargs)
        public_class = cls
        inner_optimizer = _inner_optimizer_argument(public_class, args, kwargs)
        if isinstance(inner_optimizer, LegacyOptimizer):
            native_class = _native.LossScaleOptimizer
        elif isinstance(inner_optimizer, NewOptimizer):
            native_class = _native.LossScaleOptimizerV3
        else:
            _arguments.check_inner_optimizer(
                inner_optimizer, OPTIMIZER_TYPES, NativeLossScaleOptimizer
            )
            raise AssertionError("unreachable: check_inner_optimizer raises for non-optimizers")
        concrete = _concrete_class(public_class, native_class)
        # type.__call__, not super().__call__: Keras's metaclass would pick its own class.
        return type.__call__(concrete, *args, **kwargs)


def _inner_optimizer_argument(
    public_class: type, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The inner optimizer however it was passed (`inner_optimizer=`, `optimizer=`, positional)."""
    signature = _init_signature(public_class)
    try:
        bound = signature.bind(None, *args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{public_class.__qualname__}(): {error}") from None
    first_argument_name = list(signature.parameters)[1]  # the one after `self`
    return bound.arguments[first_argument_name]


@functools.cache
def _init_signature(public_class: type) -> inspect.Signature:
    return inspect.signature(public_class.__init__)  # type: ignore[misc]


@functools.cache
def _concrete_class(public_class: type, native_class: type) -> type:
    concrete = type(
        public_class.__name__,
        (public_class, native_class),
        {
            "__module__": public_class.__module__,
            "__qualname__": public_class.__qualname__,
            "__doc__": public_class.__doc__,
            "_public_class": public_class,
        },
    )
    # Serialize the concrete class under the public class's registered name, so that
    # deserializing goes back through the class registered there (the public class, or for the
    # experimental class the new one it loads as) and picks the concrete class anew.
    registered_name = _saving.get_registered_name(public_class)
    custom_objects = _saving.get_custom_objects()
    registered_class = custom_objects.get(registered_name)
    if isinstance(registered_class, type) and issubclass(public_class, registered_class):
        package, _, name = registered_name.partition(">")
        # Keras 2.12 refuses a name that is registered already (2.13 allows it), so the name is
        # freed first and given back to its class after: `get_custom_objects()` is the
        # registry itself, documented as such.
        del custom_objects[registered_name]
        _saving.register_keras_serializable(package, name)(concrete)
        custom_objects[registered_name] = registered_class
    return concrete


@register_serializable("compat_lso", "LossScaleOptimizer")
class LossScaleOptimizer(NativeLossScaleOptimizer, metaclass=_ConstructConcreteClass):  # type: ignore[misc,valid-type]
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
    ) -> None:
        _arguments.check_inner_optimizer(inner_optimizer, OPTIMIZER_TYPES, NativeLossScaleOptimizer)
        resolved = _arguments.resolve(dynamic, initial_scale, dynamic_growth_steps)
        super().__init__(
            inner_optimizer,
            dynamic=resolved.dynamic,
            initial_scale=resolved.initial_scale,
            dynamic_growth_steps=resolved.dynamic_growth_steps,
        )
        if isinstance(self, _native.LossScaleOptimizer):  # a legacy inner optimizer
            # Keras tracks a stand-in for the TF 2.2 `base_optimizer` dependency that restores
            # only slots; this one restores the inner optimizer's own variables (`iter`, ...) too.
            self._track_trackable(
                _TF22BaseOptimizer(self._optimizer), "base_optimizer", overwrite=True
            )

    @property
    def name(self) -> str:
        # Keras 2's concrete classes have no name, yet its `.keras` loader reads one when the
        # optimizer is not built yet: a model compiled with Keras 2's own class and saved before
        # training cannot be loaded. The inner optimizer's name is the one its variables carry.
        inner = self.inner_optimizer
        name: str = inner.name if isinstance(inner, NewOptimizer) else inner._name
        return name

    def minimize(self, loss: Any, var_list: Any, *args: Any, **kwargs: Any) -> Any:
        # TF 2.4 accepted a single variable (`var_list=var`, as in its documentation); Keras 2's
        # new optimizers zip the gradients with `var_list` and fail on a lone variable.
        if not callable(var_list):
            var_list = tf.nest.flatten(var_list)
        return super().minimize(loss, var_list, *args, **kwargs)

    def get_gradients(self, loss: Any, params: Any) -> list[Any]:
        # TF 2.4-2.10's (compat_lso/core/get_gradients.py). Keras's wrapper of a legacy optimizer
        # has it, through the inner optimizer's; its wrapper of a new one (TF 2.11-2.15's default,
        # what `tf.keras.optimizers.Adam` now builds) has none. Eagerly, a ValueError names the fix.
        return _get_gradients.get_gradients(self, loss, params)

    def get_config(self) -> dict[str, Any]:
        # Keras's concrete class (after this one in the MRO) writes the TF 2.4 form. Defined
        # here too because Keras registers only classes that have a get_config.
        config: dict[str, Any] = super().get_config()
        return config

    @classmethod
    def from_config(
        cls, config: dict[str, Any], custom_objects: dict[str, Any] | None = None
    ) -> Any:
        normalized = _config.read(config)
        normalized.pop("name", None)  # Keras 2 loss scale optimizers have no name of their own
        inner_optimizer = deserialize_inner_optimizer(
            normalized.pop("inner_optimizer"), custom_objects
        )
        public_class = cls.__dict__.get("_public_class", cls)
        return public_class._from_resolved_config(inner_optimizer, normalized)

    @classmethod
    def _from_resolved_config(cls, inner_optimizer: Any, arguments: dict[str, Any]) -> Any:
        return cls(inner_optimizer, **arguments)


class _TF22BaseOptimizer(_native.FakeOptimizerForRestoration):  # type: ignore[misc,name-defined]
    """The `base_optimizer` of a TF 2.2 checkpoint, restored into the inner optimizer.

    TF 2.2's LossScaleOptimizer tracked its inner optimizer as `base_optimizer`, so a TF 2.2
    checkpoint holds `optimizer/base_optimizer/iter` (and `learning_rate`, `beta_1`, ...) and
    slots under `.OPTIMIZER_SLOT/optimizer/base_optimizer/`. Keras 2's own stand-in
    (`FakeOptimizerForRestoration`) forwards only slots, so `iterations` came back as 0 and Adam's
    bias correction restarted. This one also looks the inner optimizer's dependencies up in the
    inner optimizer, and defers those not created yet to it (restored when it creates them).
    It has no dependencies of its own, so saving is unchanged.
    """

    def _lookup_dependency(self, name: str, cached_dependencies: Any = None) -> Any:
        return self._optimizer._lookup_dependency(name)

    @property
    def _deferred_dependencies(self) -> Any:
        return self._optimizer._deferred_dependencies


def deserialize_inner_optimizer(serialized: Any, custom_objects: dict[str, Any] | None) -> Any:
    if isinstance(serialized, OPTIMIZER_TYPES):
        return serialized
    serialized = dict(serialized)
    inner_config = dict(serialized.get("config") or {})
    if any(key in inner_config for key in _KERAS_3_ONLY_OPTIMIZER_KEYS):
        # Saved by Keras 3, whose optimizers are the new kind. Without the flag, Keras 2 reads
        # a config that lacks `is_legacy_optimizer` as a legacy one.
        for key in _KERAS_3_ONLY_OPTIMIZER_KEYS:
            if inner_config.pop(key, None) is not None:
                raise ValueError(
                    f"The inner optimizer config sets `{key}`, which Keras 2 optimizers do not "
                    f"have. Remove `{key}` from the saved config (for a fixed loss scale, use "
                    "LossScaleOptimizer(opt, dynamic=False, initial_scale=...) instead)."
                )
        inner_config["is_legacy_optimizer"] = False
        serialized["config"] = inner_config
    return tf.keras.optimizers.deserialize(serialized, custom_objects=custom_objects)
