"""LSO021: an apply_gradients on a loss scale optimizer whose gradients the codemod cannot follow
to a scaled or an unscaled loss (keras3 only). codemods/rules/gradient_scaling.py decides when;
the finding states only what codemods/meaning/gradients.py saw."""

from __future__ import annotations

import ast

from codemods.meaning.gradients import Path
from codemods.meaning.module import Context

CODE = "LSO021"


def report(context: Context, apply: ast.Call, subject: str, path: Path) -> None:
    if not context.wants(CODE, apply):
        return
    seen = path.seen or "a path the codemod cannot follow"
    context.report(
        CODE,
        apply,
        f"{subject}: not known if gradients of a scaled loss ({seen})",
    )
