"""LSO014: TensorFlow's private tensorflow.python.keras.mixed_precision.experimental package.

TF 2.1-2.3 users imported it to reach the implementation (`loss_scale_optimizer`, `policy`,
`loss_scale`). It was removed in TF 2.4. Its exported names, read through an import the codemod can
re-point, resolve to their public names (table.public_of_private), which the other rules migrate;
what reaches this rule is the rest, reported with the public name to import where there is one.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context

CODE = "LSO014"


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    if _spelled_publicly(context, node):
        return  # `lso.LossScaleOptimizer`: private_public_spelling writes the public name
    if context.wants(CODE, node):
        context.report(
            CODE,
            node,
            f"{table.brief(qualified)}: private API, {table.private_fact(qualified)}",
            reason="private",
            help=_public(qualified),
        )
    context.claim(node)


def _spelled_publicly(context: Context, node: ast.expr) -> bool:
    """Whether `node` is the private module of TF 2.4-2.5 (`lso`) read as the root of one of
    tf.keras's public names (`lso.LossScaleOptimizer`)."""
    if not isinstance(node, ast.Name):
        return False
    for attribute in context.names.attributes:
        if attribute.value is node:
            public = context.qualified(attribute)
            return (
                public is not None
                and public.startswith("tensorflow.keras.")
                and table.classify(public) is None
            )
    return False


def _public(qualified: str) -> str:
    """The public name to import instead, where the private name is one TF 2.1-2.3 exported
    (table.PRIVATE_PUBLIC: read through the package itself, the rules could not re-point it)."""
    public = table.PRIVATE_PUBLIC.get(qualified)
    if public is not None:
        return f"import {table.display(public)} instead, then run the codemod again"
    return "no public name: port it by hand (--explain LSO014)"
