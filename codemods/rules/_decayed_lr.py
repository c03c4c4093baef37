"""LSO019's rewrite of `opt._decayed_lr(dtype)`, Keras 2's OptimizerV2 private method.

NVIDIA's BERT trainer logs `optimizer._optimizer._decayed_lr('float32')`: the learning rate of the
step, a schedule evaluated at the optimizer's iterations, cast to the dtype. Keras 3's optimizers
have no `_decayed_lr`, but their `learning_rate` property is that value (a schedule evaluated at
`iterations`), so the call becomes `tf.cast(opt.learning_rate, dtype)` (tf.cast takes a dtype or
its name) on keras3 and shim. `opt._optimizer` (Keras 2's private name for the inner optimizer,
which Keras 3's own class lacks) is written `opt.inner_optimizer`, which both Keras 3's class and
compat_lso's have. Only where the receiver is a name or an attribute chain and the dtype one
argument: a call or subscript receiver (it would be written differently), or a reference to the
method that is not a call, stays reported. The rewrite needs a name for tensorflow in scope
(`tensorflow_name`), as the other rules that write `tf.` do; without one it stays reported.
"""

from __future__ import annotations

import ast

from codemods.meaning.module import Context
from codemods.rules._tf24 import parent, tensorflow_name
from codemods.source import one_line

METHOD = "_decayed_lr"
FORM = "tf.cast(opt.learning_rate, dtype)"
# What the rewrite leaves to check: Keras 3 ignores an optimizer's `decay` (with a warning).
HELP = "if the optimizer was built with decay=, Keras 3 ignores it: this is the rate it applies"


def rewrite(context: Context, node: ast.Attribute, code: str, *, inner: bool) -> bool:
    """Rewrite `X._decayed_lr(D)` (`node` is `X._decayed_lr`); False where it cannot. `inner`:
    `X` is `opt._optimizer` of a loss scale optimizer `opt` (not, say, a trainer's own
    `self._optimizer` that holds one)."""
    call = parent(context, node)
    if not (isinstance(call, ast.Call) and call.func is node):
        return False
    dtype = _dtype(call)
    if dtype is None:
        return False
    receiver = node.value
    root = receiver
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    tf = tensorflow_name(context, root)
    if tf is None:
        return False
    source = context.source
    written = source.segment(receiver)
    if inner and isinstance(receiver, ast.Attribute) and receiver.attr == "_optimizer":
        written = f"{source.segment(receiver.value)}.inner_optimizer"
    old = f"{source.segment(receiver)}.{METHOD}({source.segment(dtype)})"
    new = f"{tf}.cast({written}.learning_rate, {source.segment(dtype)})"
    context.fix(
        code,
        call,
        f"{one_line(old, 50)} -> {one_line(new, 70)}",
        [context.edit(call, new)],
        consumes=set(),
        help=HELP,
    )
    return True


def _dtype(call: ast.Call) -> ast.expr | None:
    """The one dtype argument, positional or `var_dtype=`."""
    if len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    if not call.args and len(call.keywords) == 1 and call.keywords[0].arg == "var_dtype":
        return call.keywords[0].value
    return None
