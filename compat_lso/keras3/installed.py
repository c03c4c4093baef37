"""Keras 3 only: what `install()` puts in place of `tf.keras.mixed_precision.LossScaleOptimizer`.

TF 2.4-2.15 code calls `tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic, initial_scale,
dynamic_growth_steps)` and means Keras 2's class. On Keras 3 that name is a different class:
positional arguments land on other parameters, `dynamic=False` and `get_scaled_loss` are gone,
and the update rule differs. While installed, the name is `LossScaleOptimizer` below: a factory,
like Keras 2's own exported class was, that accepts both generations' calls and builds the shim's
`compat_lso.keras3.optimizer.LossScaleOptimizer` (an instance of Keras 3's class, with Keras 2's
meaning).

- TF 2.4's call: `LossScaleOptimizer(opt, False, 128)`, `(opt, True, 1024, 500)`, `dynamic=`.
- Keras 3's call: `initial_scale=`, `dynamic_growth_steps=`, `name=`, and the base optimizer
  keywords Keras 3 accepts at their default values (configs saved by older Keras 3 carry them).
- A positional second argument that is not a bool is refused: in TF 2.4 it is `dynamic`, in
  Keras 3 `initial_scale`; reading it as either could be silently wrong.
- `isinstance(x, LossScaleOptimizer)` is true for every Keras 3 loss scale optimizer, the ones
  Keras builds itself included, as `isinstance` against the native name was.

`optimizer_for_compile` gives `Model.compile` TF 2.15's automatic wrapping under
`mixed_float16`, with Keras 2's rule. `install_legacy_optimizers` gives TF 2.15's
`tf.keras.optimizers.legacy` names Keras 3's optimizer of the same rule (keras3/legacy_optimizers),
and `install_keras2_lr` every Keras 3 optimizer Keras 2's `lr` (keras3/keras2_lr).
"""

from __future__ import annotations

import weakref
from typing import Any

import keras

from compat_lso.core import config as _config
from compat_lso.keras3.keras2_lr import install as install_keras2_lr
from compat_lso.keras3.legacy_optimizers import install as install_legacy_optimizers
from compat_lso.keras3.legacy_optimizers import user_site
from compat_lso.keras3.native import NativeLossScaleOptimizer
from compat_lso.keras3.optimizer import LossScaleOptimizer as ShimLossScaleOptimizer

__all__ = [
    "LossScaleOptimizer",
    "NativeLossScaleOptimizer",
    "install_keras2_lr",
    "install_legacy_optimizers",
    "optimizer_for_compile",
    "tf_2_4_arguments",
]

TF_2_4_SIGNATURE = (
    "LossScaleOptimizer(inner_optimizer, dynamic=True, initial_scale=None, "
    "dynamic_growth_steps=None)"
)
KERAS_3_SIGNATURE = (
    "LossScaleOptimizer(inner_optimizer, initial_scale=2.0**15, dynamic_growth_steps=2000, "
    "name=None)"
)
_TF_2_4_POSITIONAL = ("dynamic", "initial_scale", "dynamic_growth_steps")
_KEYWORDS = (*_TF_2_4_POSITIONAL, "name")

# Keras 3's base optimizer arguments, which its LossScaleOptimizer accepts only at these values
# (keras/src/optimizers/loss_scale_optimizer.py): `from_config` of older Keras 3 files passes them.
_BASE_OPTIMIZER_DEFAULTS = _config.KERAS_3_BASE_OPTIMIZER_DEFAULTS


class _FactoryMeta(type(ShimLossScaleOptimizer)):  # type: ignore[misc]
    """Constructing the installed name builds the shim's class; isinstance sees Keras 3's."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is not LossScaleOptimizer:
            # A subclass that old code derived from the installed name: its own `__init__` runs
            # and reaches `LossScaleOptimizer.__init__` below through `super()`.
            return super().__call__(*args, **kwargs)
        inner_optimizer, arguments = tf_2_4_arguments(args, kwargs)
        return ShimLossScaleOptimizer(inner_optimizer, **arguments)

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is LossScaleOptimizer:
            return isinstance(instance, NativeLossScaleOptimizer)
        return bool(super().__instancecheck__(instance))

    def __subclasscheck__(cls, subclass: type) -> bool:
        if cls is LossScaleOptimizer:
            return issubclass(subclass, NativeLossScaleOptimizer)
        return bool(super().__subclasscheck__(subclass))


class LossScaleOptimizer(ShimLossScaleOptimizer, metaclass=_FactoryMeta):  # type: ignore[misc]
    """`tf.keras.mixed_precision.LossScaleOptimizer` while `compat_lso.install()` is in effect.

    Takes TF 2.4-2.15's arguments, `LossScaleOptimizer(inner_optimizer, dynamic=True,
    initial_scale=None, dynamic_growth_steps=None)`, positionally or by keyword, and Keras 3's
    `initial_scale=`, `dynamic_growth_steps=` and `name=` by keyword. Returns a
    `compat_lso.LossScaleOptimizer`: Keras 2's behaviour (fixed scaling, `get_scaled_loss` /
    `get_unscaled_gradients`, `loss_scale`, `dynamic_counter`, Keras 2's update rule) on an
    instance of Keras 3's own class. `compat_lso.uninstall()` restores Keras 3's class.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        inner_optimizer, arguments = tf_2_4_arguments(args, kwargs)
        super().__init__(inner_optimizer, **arguments)


def tf_2_4_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Either generation's call -> (inner_optimizer, the shim's keyword arguments)."""
    kwargs = dict(kwargs)
    if args:
        inner_optimizer, positional = args[0], args[1:]
        if "inner_optimizer" in kwargs:
            raise TypeError(
                "LossScaleOptimizer() got multiple values for argument 'inner_optimizer'"
            )
    elif "inner_optimizer" in kwargs:
        inner_optimizer, positional = kwargs.pop("inner_optimizer"), ()
    else:
        raise TypeError(
            "LossScaleOptimizer() missing 1 required argument: 'inner_optimizer' (for example "
            "LossScaleOptimizer(tf.keras.optimizers.SGD()))"
        )
    if positional and not isinstance(positional[0], bool):
        raise TypeError(_ambiguous_positional_message(positional[0]))
    if len(positional) > len(_TF_2_4_POSITIONAL):
        raise TypeError(
            f"LossScaleOptimizer() takes at most 4 positional arguments ({TF_2_4_SIGNATURE}) but "
            f"{len(args)} were given; pass name= by keyword"
        )
    for parameter, value in zip(_TF_2_4_POSITIONAL, positional, strict=False):
        if parameter in kwargs:
            raise TypeError(f"LossScaleOptimizer() got multiple values for argument {parameter!r}")
        kwargs[parameter] = value
    arguments = {key: kwargs.pop(key) for key in _KEYWORDS if key in kwargs}
    for key, default in _BASE_OPTIMIZER_DEFAULTS.items():
        if key in kwargs and kwargs.pop(key) != default:
            # Keras 3's own message for the same call.
            raise ValueError(
                f"LossScaleOptimizer does not support `{key}`. Instead, set `{key}` on the "
                "`inner_optimizer`."
            )
    if kwargs:
        raise TypeError(
            f"LossScaleOptimizer() got unexpected keyword arguments: {sorted(kwargs)}. It takes "
            f"TF 2.4's {TF_2_4_SIGNATURE}, or Keras 3's {KERAS_3_SIGNATURE}"
        )
    return inner_optimizer, arguments


def _ambiguous_positional_message(value: Any) -> str:
    return (
        f"LossScaleOptimizer(inner_optimizer, {value!r}, ...): a second positional argument must "
        "be a bool. While compat_lso.install() is in effect, "
        "tf.keras.mixed_precision.LossScaleOptimizer takes TF 2.4-2.15's arguments, "
        f"{TF_2_4_SIGNATURE}, where the second is `dynamic`, and Keras 3's, {KERAS_3_SIGNATURE}, "
        "where it is `initial_scale`; a number there is refused rather than guessed. Pass it by "
        f"keyword: LossScaleOptimizer(inner_optimizer, initial_scale={value!r}) (dynamic), or "
        f"LossScaleOptimizer(inner_optimizer, dynamic=False, initial_scale={value!r}) (fixed). "
        "Code written for Keras 3 can use keras.optimizers.LossScaleOptimizer, which install() "
        "leaves as it is, or opt out with COMPAT_LSO_KEEP_NATIVE=1."
    )


def optimizer_for_compile(model: Any, optimizer: Any, auto_scale_loss: bool) -> Any:
    """TF 2.15's `Model._get_optimizer`: under `mixed_float16`, wrap with Keras 2's rule.

    Keras 3's `compile` would wrap the optimizer in its own class, whose update rule differs;
    handing it one of the shim's makes it keep that one (it is an instance of Keras 3's class).
    """
    if optimizer is None or not auto_scale_loss:
        return optimizer
    optimizer = keras.optimizers.get(optimizer)
    policy = getattr(model, "dtype_policy", None)
    if getattr(policy, "name", None) == "mixed_float16" and not isinstance(
        optimizer, NativeLossScaleOptimizer
    ):
        site = user_site()
        first = _WRAPPED_BY_COMPILE.get(optimizer)
        if first is not None:
            # Keras 2's compile() refused it too ("already wrapped"), without saying where.
            raise ValueError(WRAPPED_TWICE.format(site=site, first=first))
        wrapped = ShimLossScaleOptimizer(optimizer)
        _WRAPPED_BY_COMPILE[optimizer] = site
        return wrapped
    return optimizer


# Where compile() wrapped each optimizer: a second compile() of it under mixed_float16 is refused
# at once with both lines, as Keras 2 refused it (an optimizer is wrapped once).
_WRAPPED_BY_COMPILE: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
WRAPPED_TWICE = (
    "{site}: compile() under mixed_float16 wraps its optimizer in a LossScaleOptimizer, and the "
    "compile() at {first} already wrapped this one (an optimizer is wrapped once; Keras 2 "
    "refused this too). To train several models with one optimizer as TF 2.4 did, wrap it once "
    "and give that to every compile(): opt = tf.keras.mixed_precision.LossScaleOptimizer(opt); "
    "or give each model an optimizer of its own (a step counter and loss scale each)"
)
