"""LSO014, the spelling: a private path to one of tf.keras's own mixed-precision names is written
as the public name.

TF 2.4-2.5 kept tf.keras itself under tensorflow.python.keras, and code imported its
`loss_scale_optimizer` and `policy` modules from there. From TF 2.6 that path is a private copy
whose classes are not tf.keras's, so the code breaks on every target. Where no other rule rewrote
such a reference (the target keeps the public name as it is), it is spelled through the import
re-pointed to the public module, which then names the same object the code meant on TF 2.4.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context

CODE = "LSO014"


def on_module(context: Context) -> None:
    names = context.names
    prefix = table.PRIVATE_KERAS_TF24 + "."
    if not names.bound_to(lambda base: base.startswith(prefix)):
        return  # a reference below reads the private path only through such a binding
    references: list[ast.Attribute | ast.Name] = [*names.attributes, *names.loads]
    # A reference another rule rewrote is spelled by that rule; one it only claimed (a note, a
    # finding) still reads the private path, which must go.
    consumed = {load for fix in context.fixes if fix.active for load in fix.consumes}
    for node in references:
        if not isinstance(node.ctx, ast.Load):
            continue
        root: ast.expr = node
        while isinstance(root, ast.Attribute):
            root = root.value
        binding = names.binding_of(root) if isinstance(root, ast.Name) else None
        base = names.binding_qualified(binding) if binding is not None else None
        if base is None or not base.startswith(prefix):
            continue
        if context.loads_in(node) <= consumed:  # (after the cheap test: it walks the node)
            continue
        public = context.qualified(node)
        if public is None or table.is_private(public) or table.classify(public) is not None:
            continue  # no public name (LSO014 reports it), or an old one another rule migrates
        if public.startswith(table.PRIVATE_KERAS_TF24 + "."):
            continue  # not one of tf.keras's names (device_compatibility_check): nothing to write
        if not context.wants(CODE, node):
            context.claim(node)
            continue
        spelled = context.spell(node, public)
        if spelled is None:
            continue
        consumed |= context.loads_in(node)
        private = ".".join([base, *_attributes(node)])
        context.fix(
            CODE,
            node,
            f"{table.brief(private)} -> {table.display(public)}",
            [context.edit(node, spelled.text)],
            consumes=context.loads_in(node),
            spellings=[spelled],
            manual=f"{table.brief(private)}: private API, {table.private_fact(base)}",
        )


def _attributes(node: ast.expr) -> list[str]:
    """`lso.LossScaleOptimizer` -> ["LossScaleOptimizer"]."""
    chain: list[str] = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    return chain[::-1]
