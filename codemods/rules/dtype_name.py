"""LSO018: `x.dtype.name` in a module that uses mixed precision, which fails on Keras 3.

TensorFlow's mixed-precision guide prints `outputs.dtype.name` and `dense1.kernel.dtype.name`: on
Keras 2 `dtype` is a `tf.DType`, whose `.name` is the string; on Keras 3 a KerasTensor's or a
variable's `dtype` is that string already, which has no `.name` (AttributeError). Reported, not
rewritten: `x` may as well be a tf.Tensor or a NumPy array, whose dtypes have `.name` and some of
which (NumPy's `object`, strings) `tf.as_dtype` refuses. Only modules that use mixed precision
(table.MIXED_PRECISION_WORDS) are looked at: there the dtype is what the code is about.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context

CODE = "LSO018"


def on_module(context: Context) -> None:
    if context.target not in table.DTYPE_NAME_TARGETS:
        return
    text = context.source.text
    if table.DTYPE_NAME_WORD not in text or not any(
        word in text for word in table.MIXED_PRECISION_WORDS
    ):
        return
    for node in context.names.attributes:
        dtype = node.value
        if (
            node.attr != "name"
            or not isinstance(node.ctx, ast.Load)
            or not isinstance(dtype, ast.Attribute)
            or dtype.attr != "dtype"
        ):
            continue
        if context.wants(CODE, node):
            owner = context.source.segment(dtype.value)
            context.report(
                CODE,
                node,
                f"{context.source.segment(node)} fails on Keras 3, where dtype is a string",
                help=f"write tf.as_dtype({owner}.dtype).name: the same name on Keras 2 and 3",
            )
        context.claim(node)
