"""LSO014: TensorFlow's private tensorflow.python.keras.mixed_precision.experimental package.

TF 2.1-2.3 users imported it to reach the implementation (`loss_scale_optimizer`, `policy`,
`loss_scale`). It was removed in TF 2.4 and has no public module to re-point an import to, so every
use is reported with the public name to import instead.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context

CODE = "LSO014"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    if context.wants(CODE, node):
        context.report(
            CODE,
            node,
            f"{table.brief(qualified)}: private API, removed in TF 2.4",
            help=_public(qualified),
        )
    context.claim(node)


# The private modules' public homes in TF 2.1-2.3, which the codemod then migrates in turn.
_PUBLIC = {
    "loss_scale_optimizer": "tf.keras.mixed_precision.experimental",
    "policy": "tf.keras.mixed_precision.experimental",
    "loss_scale": "tf.mixed_precision.experimental",
}


def _public(qualified: str) -> str | None:
    """`import <public name> instead, then run the codemod again` where the name has one."""
    module, _, member = qualified.removeprefix(table.PRIVATE_KERAS_EXPERIMENTAL + ".").partition(
        "."
    )
    if module in _PUBLIC and member and "." not in member:
        return f"import {_PUBLIC[module]}.{member} instead, then run the codemod again"
    return None
