"""LSO018: `x.dtype.name` in a module that uses mixed precision, which fails on Keras 3.

TensorFlow's mixed-precision guide prints `outputs.dtype.name` and `dense1.kernel.dtype.name`: on
Keras 2 `dtype` is a `tf.DType`, whose `.name` is the string; on Keras 3 a KerasTensor's or a
variable's `dtype` is that string already, which has no `.name` (AttributeError).

Rewritten as `getattr(x.dtype, "name", x.dtype)`: the same string for a `tf.DType`, a NumPy dtype
(both have `.name`) and Keras 3's string (which is the name), so it cannot change what the code
does on any generation. `tf.as_dtype(x.dtype).name` would not do: `x` may be a NumPy array, and
tf.as_dtype names NumPy's object and str dtypes "string" and refuses datetime64. The rewrite
reads `x.dtype` twice, so `x` must be a name or a chain of attributes on one; a call or a
subscript (`model(x).dtype.name`) would run twice, and stays reported. Only modules that use
mixed precision (table.MIXED_PRECISION_WORDS) are looked at: there the dtype is what the code is
about.
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
            _rewrite_or_report(context, node, dtype)
        context.claim(node)


def _rewrite_or_report(context: Context, node: ast.Attribute, dtype: ast.Attribute) -> None:
    written = context.source.segment(node)
    owner = context.source.segment(dtype.value)
    if not _read_twice_safely(dtype.value):
        context.report(
            CODE,
            node,
            f"{written} fails on Keras 3, where dtype is a string; `{owner}` would run twice "
            "in a rewrite",
            reason="limit",
            help=f"write tf.as_dtype({owner}.dtype).name: the same name on Keras 2 and 3",
        )
        return
    dtype_text = context.source.segment(dtype)
    new = f'getattr({dtype_text}, "name", {dtype_text})'
    message = f'{written} -> getattr({dtype_text}, "name", ...)'
    context.fix(CODE, node, message, [context.edit(node, new)], consumes=set())


def _read_twice_safely(node: ast.expr) -> bool:
    """A name, or attributes on one: reading it twice reads the same object, and runs nothing
    that a property of the user's own could not already run."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
