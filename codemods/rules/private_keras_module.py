"""LSO014: TensorFlow's private tensorflow.python.keras.mixed_precision.experimental package.

TF 2.1-2.3 users imported it to reach the implementation (`loss_scale_optimizer`, `policy`,
`loss_scale`). It was removed in TF 2.4 and has no public module to re-point an import to, so every
use is reported with the public name to import instead.
"""

from __future__ import annotations

import ast

from codemods.context import Context
from codemods.rules._rename import short

CODE = "LSO014"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    if context.wants(CODE, node):
        name = short(qualified).rpartition(".")[2]
        context.report(CODE, node, f"`{name}` is from TF's private keras package, removed in TF 2.4")
    context.claim(node)

