"""`enable_mixed_precision_graph_rewrite` / `disable_...`, as TF 2.4-2.8 had them for Keras.

TensorFlow's own `tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite` still
exists, but on TF 2.9+ it wraps only the optimizers Keras registers with it (the legacy
`OptimizerV2`), and with the non-experimental class. TF 2.4-2.8 wrapped a Keras optimizer in the
experimental class (Keras registered `LossScaleOptimizerV1`); these do that for every optimizer
the shim wraps, in TensorFlow's order: everything is checked before anything global changes.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from compat_lso import _backend
from compat_lso.core import arguments as _arguments
from compat_lso.core.deprecation import warn_deprecated
from compat_lso.legacy.loss_scale import loss_scale_arguments, replacement_call
from compat_lso.legacy.optimizer import LossScaleOptimizer


def _global_state() -> Any:
    # TensorFlow's flag that Keras 2's `set_global_policy` reads to refuse a mixed policy while
    # the rewrite is on (TF has no public setter; the module exists in TF 2.4 through 2.21).
    try:
        from tensorflow.python.training.experimental import mixed_precision_global_state
    except ImportError:  # pragma: no cover - a TensorFlow without it: nothing reads the flag
        return None
    return mixed_precision_global_state


def enable_mixed_precision_graph_rewrite(opt: Any, loss_scale: Any = "dynamic") -> Any:
    """TF 2.4-2.8's graph rewrite: wrap `opt`, then turn on Grappler's auto mixed precision.

    Returns `compat_lso.experimental.LossScaleOptimizer(opt, loss_scale)`, as TF 2.4-2.8 did for
    Keras optimizers (TensorFlow's `LossScaleOptimizerV1`). TensorFlow's errors, word for word:
    a ValueError if the global policy is a mixed one or `opt` already is a loss scale optimizer.
    """
    arguments = loss_scale_arguments(loss_scale)
    warn_deprecated(
        "enable_mixed_precision_graph_rewrite is deprecated. Replace it with: "
        "tf.keras.mixed_precision.set_global_policy('mixed_float16') and "
        f"{replacement_call(arguments, 'opt')}"
    )
    policy = tf.keras.mixed_precision.global_policy()
    if policy.compute_dtype != policy.variable_dtype:
        # TensorFlow's message (tensorflow/python/training/experimental/mixed_precision.py).
        raise ValueError(
            "The mixed precision graph rewrite cannot be enabled, because the global Keras "
            "dtype Policy has been set to a mixed precision policy. At most, one of the "
            "following can be called:\n\n"
            "  1. tf.keras.mixed_precision.set_global_policy() with a mixed precision policy "
            "(You called this first)\n\n"
            "  2. tf.train.experimental.enable_mixed_precision_graph_rewrite() "
            "(You called this second)\n"
            "You called both functions, which is an error, because both functions enable you "
            "to use mixed precision. If in doubt which function to use, use the first, as it "
            "supports Eager execution and is more customizable."
        )
    native = tf.keras.mixed_precision.LossScaleOptimizer
    if isinstance(opt, (native, _backend.implementation().LossScaleOptimizer)):
        raise ValueError(
            '"opt" must not already be an instance of a LossScaleOptimizer. '
            "`enable_mixed_precision_graph_rewrite` will automatically wrap the optimizer with "
            "a LossScaleOptimizer."
        )
    if isinstance(opt, tf.compat.v1.train.Optimizer):
        # TensorFlow still wraps its own TF1 optimizers, in its TF1 loss scale optimizer.
        return tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(
            opt, _tensorflow_loss_scale(arguments)
        )
    if not isinstance(opt, _backend.implementation().OPTIMIZER_TYPES):
        raise ValueError(
            '"opt" must be an instance of a tf.train.Optimizer or a '
            f"tf.keras.optimizers.Optimizer, but got: {opt}"
        )
    wrapped = LossScaleOptimizer._without_warning(opt, loss_scale)
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})
    state = _global_state()
    if state is not None:
        state.set_mixed_precision_graph_rewrite_enabled(True)
    return wrapped


def _tensorflow_loss_scale(arguments: dict[str, Any]) -> Any:
    """The loss scale `arguments` describe, as TensorFlow's TF1 optimizer wrapper takes it."""
    if not arguments.get("dynamic", True):
        return tf.compat.v1.mixed_precision.FixedLossScale(arguments["initial_scale"])
    return tf.compat.v1.mixed_precision.DynamicLossScale(
        initial_loss_scale=arguments.get("initial_scale", _arguments.DEFAULT_INITIAL_SCALE),
        increment_period=arguments.get("dynamic_growth_steps", _arguments.DEFAULT_GROWTH_STEPS),
    )


def disable_mixed_precision_graph_rewrite() -> None:
    """Turn Grappler's auto mixed precision off again."""
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision": False})
    state = _global_state()
    if state is not None:
        state.set_mixed_precision_graph_rewrite_enabled(False)
