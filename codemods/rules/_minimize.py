"""LSO011's `opt.minimize(...)` on keras3: Keras 3 optimizers have no minimize."""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._tf24 import bind, call_kind, instances

CODE = "LSO011"


def report(context: Context, call: ast.Call) -> None:
    """`opt.minimize(...)` on a TF 2.4 or experimental LossScaleOptimizer: Keras 3 optimizers have
    no minimize, and the keras3 target makes both Keras 3's class.

    Only where `opt` may hold one made in the module (`minimize` is too common a name to guess
    at): bound to the constructor, or handed on through a factory's return, an attribute, a
    container or a parameter (codemods/meaning/instances.py)."""
    assert isinstance(call.func, ast.Attribute)
    receiver = call.func.value
    made = [c for c in instances(context).typed(receiver).calls if _old_class(context, c)]
    if not made or not context.wants(CODE, call):
        return
    name = context.source.segment(receiver)
    context.report(
        CODE,
        call,
        f"{name}.minimize() not rewritten: Keras 3 optimizers have no minimize",
        reason="no-equivalent",
        help=(
            f"in a tf.GradientTape, take the gradients of {name}.scale_loss(loss) and pass them "
            f"to {name}.apply_gradients"
        ),
    )


def _old_class(context: Context, constructor: ast.Call) -> bool:
    """A call of TF 2.1-2.8's experimental class, or of TF 2.4-2.15's read as TF 2.4 code."""
    qualified = context.qualified(constructor.func)
    if qualified in table.OLD_LSO:
        return True
    return qualified in table.TF24_LSO and call_kind(context, bind(constructor)) != "keras3"
