"""Shared by the rules that only move a name to its new home."""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context


def rename(context: Context, node: ast.expr, code: str, new: str | None, old: str) -> None:
    """Rewrite a reference to `new` if the rule is safe here and the name can be written; else
    report it."""
    if not context.wants(code, node):
        context.claim(node)
        return
    spelled = context.spell(node, new) if new is not None and context.safe(code) else None
    if new is None or spelled is None:
        if new is None or not context.safe(code):
            fact = f"{short(old)} has no safe rewrite on --target {context.target}"
            context.report(code, node, fact, reason="no-equivalent")
        else:
            fact = f"{short(old)} not rewritten: cannot write {short(new)} here"
            context.report(code, node, fact, reason="limit")
        return
    context.fix(
        code,
        node,
        arrow(old, new),
        [context.edit(node, spelled.text)],
        consumes=context.loads_in(node),
        spellings=[spelled],
        manual=short(old),
    )


short = table.display


def arrow(old: str, new: str, old_suffix: str = "", new_suffix: str = "") -> str:
    """`old -> new` as a finding says it, the new name without the module path both share except
    its last part (the line shows the rest): `tf.keras.mixed_precision.experimental.set_policy ->
    mixed_precision.set_global_policy`."""
    old_parts, new_parts = short(old).split("."), short(new).split(".")
    shared = 0
    while shared < min(len(old_parts), len(new_parts)) - 1 and (
        old_parts[shared] == new_parts[shared]
    ):
        shared += 1
    tail = ".".join(new_parts[max(shared - 1, 0) :])
    return f"{short(old)}{old_suffix} -> {tail}{new_suffix}"
