"""LSO024: a Keras 2 legacy optimizer (`tf.keras.optimizers.legacy.Adam`, ...) in mixed-precision
code, on --target keras3 and shim: Keras 3 cannot build one.

TF 2.11-2.15 code kept its optimizers on `tf.keras.optimizers.legacy` for checkpoints or Horovod,
often inside `LossScaleOptimizer(...)`. Keras 3's `keras.optimizers.legacy` holds the same names
only to raise ImportError when one is built, so the migrated program (and `python -m compat_lso
run`) stops there. Reported, not rewritten: Keras 3's optimizer of the same name does not compute
the same bits (the rule's details in codemods/table/rules_surface.py say what was measured).
Only modules that use mixed precision (table.MIXED_PRECISION_WORDS) are looked at.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context

CODE = "LSO024"


def on_module(context: Context) -> None:
    if context.target not in table.LEGACY_OPTIMIZER_TARGETS:
        return
    text = context.source.text
    if ".legacy" not in text and "legacy." not in text:
        return
    if not any(word in text for word in table.MIXED_PRECISION_WORDS):
        return
    nodes: list[ast.Attribute | ast.Name] = [*context.names.attributes, *context.names.loads]
    for node in nodes:
        qualified = context.qualified(node) or ""
        if not isinstance(node.ctx, ast.Load) or not qualified.startswith(table.LEGACY_OPTIMIZERS):
            continue
        name = qualified.rsplit(".", 1)[-1]
        if name in ("legacy", "Optimizer") or not context.wants(CODE, node):  # built: reported
            continue
        context.report(
            CODE,
            node,
            f"{context.source.segment(node)}: Keras 3 builds no legacy optimizer (ImportError)",
            help=f"use tf.keras.optimizers.{name} (last bits may differ), or tf_keras with "
            "TF_USE_LEGACY_KERAS=1",
        )
        context.claim(node)
