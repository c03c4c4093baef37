"""LSO028: TF 1's `tf.contrib.mixed_precision` (LossScaleOptimizer, FixedLossScaleManager,
ExponentialUpdateLossScaleManager), removed with the rest of `tf.contrib` in TF 2.0.

Reported on every target, at each reference to the module or one of its names and at each import
of it: no rewrite keeps the numbers (codemods/table/rules_tf1.py says why), and which kind of
optimizer the code wraps decides the replacement.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.source import one_line

CODE = "LSO028"
_FACT = "TF 2 has no tf.contrib (removed in TF 2.0)"


def on_module(context: Context) -> None:
    if table.CONTRIB_WORD not in context.source.text:
        return
    references: list[ast.Attribute | ast.Name] = [*context.names.attributes, *context.names.loads]
    # The longest reference first: `tf.contrib.mixed_precision.X` claims `tf.contrib...` in it.
    references.sort(key=lambda n: (n.lineno, n.col_offset, -(n.end_col_offset or 0)))
    for node in references:
        if id(node) in context.claimed or not _contrib(context.qualified(node)):
            continue
        if not context.wants(CODE, node):
            context.claim(node)
            continue
        written = one_line(context.source.segment(node), 70)
        context.report(CODE, node, f"{written}: {_FACT}", reason="no-equivalent")
    for statement in [*context.names.imports, *context.names.import_froms]:
        if isinstance(statement, ast.ImportFrom) and statement.level == 0:
            modules = [statement.module or ""]
            modules += [f"{statement.module}.{alias.name}" for alias in statement.names]
        elif isinstance(statement, ast.Import):
            modules = [alias.name for alias in statement.names]
        else:
            continue
        if any(_contrib(m) for m in modules) and context.wants(CODE, statement):
            context.report(
                CODE,
                statement,
                f"import of {table.CONTRIB_MODULE_SHORT}: {_FACT}",
                reason="no-equivalent",
            )


def _contrib(qualified: str | None) -> bool:
    module = table.CONTRIB_MIXED_PRECISION
    return qualified is not None and (qualified == module or qualified.startswith(module + "."))
