"""`experimental.LossScaleOptimizer.loss_scale`: TF 2.4's float32 tensor, callable as in TF 2.2.

TF 2.2/2.3 returned a `LossScale` object (`opt.loss_scale()` gave the current scale); TF 2.4-2.8
returned a float32 scalar tensor. Old code uses both forms, and no `tf.Tensor` can be called
(`EagerTensor` cannot be subclassed), so the value is an object that every tensor-reading path of
TensorFlow and Keras takes as the tensor it stands for:

- `tf.convert_to_tensor`, operators and `tf.cast` (a registered conversion function);
- `tf.is_tensor` (`is_tensor_like`), hence `tf.keras.backend.get_value` and `K.eval`;
- `Session.run` / `self.evaluate` in TF1 graph mode (`_as_graph_element`);
- `str`, `format` (`f"{opt.loss_scale:.1f}"`), `float`, `numpy()`, `np.asarray`.

It is read when used, so a value kept across steps shows the current scale, as TF 2.2's did.
Only `isinstance(value, tf.Tensor)` is False.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf


def _delegate(
    operation: Callable[[Any, Any], Any], reflected: bool = False
) -> Callable[[LossScaleValue, Any], Any]:
    """An operator method that reads the value first (`scale * 2`, `2 * scale`, `scale > 1`)."""
    if reflected:
        return lambda self, other: operation(other, self._read())
    return lambda self, other: operation(self._read(), other)


class LossScaleValue:
    """A float32 scalar read on use: converts to a tensor, and calling it returns the tensor."""

    __slots__ = ("_read",)

    # `tf.is_tensor` is True for it, so Keras's `get_value` and `eval` read it as a tensor.
    is_tensor_like = True

    def __init__(self, read: Callable[[], tf.Tensor]) -> None:
        self._read = read

    def __call__(self) -> tf.Tensor:
        return self._read()

    @property
    def dtype(self) -> tf.DType:
        return tf.float32

    @property
    def shape(self) -> tf.TensorShape:
        return tf.TensorShape([])

    @property
    def graph(self) -> Any:
        return self._read().graph

    def eval(self, feed_dict: Any = None, session: Any = None) -> Any:
        """TF1 graph mode: the value, as `Tensor.eval` gives it."""
        return self._read().eval(feed_dict=feed_dict, session=session)

    def _as_graph_element(self) -> tf.Tensor:
        # `Session.run(opt.loss_scale)`: the session fetches a read of the scale.
        return self._read()

    def numpy(self) -> Any:
        return self._read().numpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.numpy(), dtype=dtype)

    def __float__(self) -> float:
        return float(self._read())

    def __bool__(self) -> bool:
        return bool(self._read())

    def __neg__(self) -> tf.Tensor:
        return -self._read()

    def __repr__(self) -> str:
        return f"LossScaleValue({self._read()!r})"

    def __str__(self) -> str:
        return str(self._read())

    def __format__(self, format_spec: str) -> str:
        return format(self._read(), format_spec)

    # Arithmetic and comparisons act on the value read now, as TF 2.3's loss scale tensor did.
    __add__, __radd__ = _delegate(operator.add), _delegate(operator.add, reflected=True)
    __sub__, __rsub__ = _delegate(operator.sub), _delegate(operator.sub, reflected=True)
    __mul__, __rmul__ = _delegate(operator.mul), _delegate(operator.mul, reflected=True)
    __truediv__ = _delegate(operator.truediv)
    __rtruediv__ = _delegate(operator.truediv, reflected=True)
    __floordiv__ = _delegate(operator.floordiv)
    __rfloordiv__ = _delegate(operator.floordiv, reflected=True)
    __pow__, __rpow__ = _delegate(operator.pow), _delegate(operator.pow, reflected=True)
    __lt__, __le__ = _delegate(operator.lt), _delegate(operator.le)
    __gt__, __ge__ = _delegate(operator.gt), _delegate(operator.ge)
    __eq__, __ne__ = _delegate(operator.eq), _delegate(operator.ne)
    # Defining __eq__ would make instances unhashable; they are hashed by identity, like tensors.
    __hash__ = object.__hash__


def _convert_loss_scale_value(
    value: LossScaleValue, dtype: Any = None, name: str | None = None, as_ref: bool = False
) -> Any:
    del as_ref
    return tf.convert_to_tensor(value(), dtype=dtype, name=name)


tf.register_tensor_conversion_function(LossScaleValue, _convert_loss_scale_value)
