"""LSO002: isinstance/issubclass against the experimental class -> against the new class.

The experimental class subclasses the new one, so the new check accepts objects of both: the
switch is safe even while old objects are still around (TF 2.4 migration guidance).
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._rename import arrow, short

CODE = "LSO002"
SPELLED = frozenset({"isinstance", "issubclass"})  # the calls it looks at (the registry)


def on_call(context: Context, call: ast.Call) -> bool:
    func = call.func
    if not (
        isinstance(func, ast.Name)
        and func.id in ("isinstance", "issubclass")
        and len(call.args) == 2
    ):
        return False
    if not context.names.is_builtin(func):
        return False
    classes = call.args[1]
    for node in classes.elts if isinstance(classes, ast.Tuple) else [classes]:
        qualified = context.qualified(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if qualified not in table.OLD_LSO:
            continue
        if not context.wants(CODE, node):
            context.claim(node)
            continue
        new = (
            table.SHIM_LSO
            if context.target == "shim"
            else table.new_home(qualified, context.target)
        )
        spelled = context.spell(node, new) if new is not None else None
        if new is None or spelled is None:
            context.report(
                CODE,
                node,
                f"{func.id}() against {short(qualified)}: cannot write the new class here",
                reason="limit",
            )
            continue
        context.fix(
            CODE,
            node,
            f"{func.id}(): {arrow(qualified, new)}",
            [context.edit(node, spelled.text)],
            consumes=context.loads_in(node),
            spellings=[spelled],
            manual=f"{func.id}() against {short(qualified)}",
        )
    return False  # the other arguments may hold more
