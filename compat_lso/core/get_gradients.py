"""Keras 2's `LossScaleOptimizer.get_gradients(loss, params)`, with TF 2.4-2.10's meaning.

Keras 2's wrapper (keras/mixed_precision/loss_scale_optimizer.py, TF 2.4 to Keras 2.15) scaled the
loss (`get_scaled_loss`), called the inner optimizer's `get_gradients` on it, and unscaled what
came back (`get_unscaled_gradients`). The inner optimizer was an `OptimizerV2` (TF 2.4-2.10's
default), whose `get_gradients` took `tf.gradients` of the loss in the current graph and raised a
ValueError naming a variable whose gradient is None. It clipped nothing: since TF 2.4
`clipnorm`, `clipvalue` and `global_clipnorm` apply in `apply_gradients`, to the unscaled
gradients (before TF 2.4 OptimizerV2's `get_gradients` clipped, there the scaled ones). Keras 3's
optimizers and TF 2.11-2.15's default one have no `get_gradients`: for them those steps run here.
An inner optimizer that has one (a legacy `OptimizerV2` on Keras 2, or a subclass that defines
its own) is called, as Keras 2 did.

Eagerly, `OptimizerV2`'s `tf.gradients` ran in Keras's own graph, found no path to the eager loss,
and raised a ValueError that a gradient is None; here the ValueError says why and names the fix.
Nothing here imports Keras: the Keras 2 and Keras 3 classes both call `get_gradients` below.
"""

from __future__ import annotations

from typing import Any

EAGER = (
    "get_gradients(loss, params) takes the gradients with tf.gradients, which works only in a "
    "graph (inside a tf.function, as Keras 2's OptimizerV2 required) and not eagerly. Call it "
    "inside a tf.function, or take the gradients with a tf.GradientTape: "
    "grads = opt.get_unscaled_gradients(tape.gradient(opt.get_scaled_loss(loss), params))"
)

NO_GRADIENT = (
    "get_gradients(loss, params): variable {variable} has `None` for gradient: `loss` does not "
    "depend on it, or an op between them has no gradient (K.argmax, K.round, K.eval have none). "
    "Leave it out of `params`, or make the loss differentiable in it"
)


def get_gradients(optimizer: Any, loss: Any, params: Any) -> list[Any]:
    """The gradients of `loss` with respect to `params` (a variable or a nest of them), taken of
    the scaled loss in the current graph and returned unscaled, as TF 2.4-2.10's wrapper did."""
    import tensorflow as tf

    if tf.executing_eagerly():
        raise ValueError(EAGER)
    scaled_loss = optimizer.get_scaled_loss(loss)
    inner = optimizer.inner_optimizer
    if callable(getattr(inner, "get_gradients", None)):
        grads = inner.get_gradients(scaled_loss, params)
    else:
        grads = _optimizer_v2_gradients(tf, scaled_loss, tf.nest.flatten(params))
    return list(optimizer.get_unscaled_gradients(grads))


def _optimizer_v2_gradients(tf: Any, loss: Any, params: list[Any]) -> list[Any]:
    """OptimizerV2.get_gradients: tf.gradients of `loss`, refusing a variable without one."""
    # tf.gradients takes TensorFlow variables: a Keras 3 variable through the tf.Variable that
    # holds it (`.value` on the TensorFlow backend, outside a layer's autocast scope).
    sources = [_backing_variable(tf, p) for p in params]
    grads = tf.gradients(loss, sources)  # one per source
    # By index, not zip(..., strict=True): this runs inside the user's tf.function, and TF 2.12's
    # autograph converts zip() to its own, which takes no `strict` (TypeError).
    for index, grad in enumerate(grads):
        if grad is None:
            raise ValueError(NO_GRADIENT.format(variable=_name(params[index])))
    return list(grads)


def _backing_variable(tf: Any, variable: Any) -> Any:
    backing = getattr(variable, "value", None)
    return backing if isinstance(backing, tf.Variable) else variable


def _name(variable: Any) -> str:
    path = getattr(variable, "path", None)  # Keras 3's unique name
    return repr(path if isinstance(path, str) else getattr(variable, "name", variable))
