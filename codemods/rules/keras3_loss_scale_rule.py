"""LSO022: a note, on --target keras3, at each loss scale optimizer of TF 2.4-2.15 (or
experimental) code: after the migration Keras 3's class runs it, whose dynamic rule differs by
design. Said once per optimizer here rather than in every other rule's message.

A file that builds no loss scale optimizer but sets a policy that may be 'mixed_float16' gets the
note at each `model.compile(...)` (where Keras 3 wraps the optimizer in its own class), or at the
policy statement where the file compiles nothing: the wrapper Keras 2 made counted skipped steps
in `iterations`, which learning-rate schedules and Adam's bias correction read."""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._tf24 import bind, evidence
from codemods.rules.compile_loss_scale_optimizer import compile_calls, possible_policies
from codemods.rules.gradient_scaling import constructions

CODE = "LSO022"


# Keras 3.0-3.8's wrapper did not forward `iterations` at all (keras-team/keras#20878): said too.
COMPILE_NOTE = (
    "compile() wraps in Keras 3's LossScaleOptimizer: skipped steps not in `iterations` "
    "(before Keras 3.9 its `iterations` stays 0)"
)


def on_module(context: Context) -> None:
    if context.target != "keras3" or evidence(context).keras3_code:
        return
    made = constructions(context)
    if not made:
        _note_compile(context)
    for call in made:
        qualified = context.qualified(call.func)
        if qualified in table.KERAS3_ONLY_LSO or qualified == table.SHIM_LSO:
            continue
        dynamic = bind(call).arguments.get("dynamic")
        if isinstance(dynamic, ast.keyword):
            dynamic = dynamic.value
        if isinstance(dynamic, ast.Constant) and dynamic.value is False:
            continue  # a fixed scale: LSO015 makes it the inner optimizer's loss_scale_factor
        if context.wants(CODE, call) and not context.suppresses(call):  # any code's comment
            context.note(
                CODE,
                call,
                "Keras 3's dynamic loss scale: no floor at 1, doubling unchecked, skipped steps "
                "not in `iterations`",
            )


def _note_compile(context: Context) -> None:
    """compile()'s own wrapping under a policy that may be 'mixed_float16' (tf_keras's setters
    are not among them: it keeps Keras 2's class), where nothing here builds a loss scale
    optimizer."""
    policies = possible_policies(context)
    compiles = compile_calls(context)
    if not policies or (not compiles and any(f.code == "LSO006" and f.note for f in context.findings)):
        return  # LSO006's note at the Policy whose loss scale it dropped says it already
    for node in compiles or policies[:1]:
        if context.wants(CODE, node) and not context.suppresses(node):
            context.note(CODE, node, COMPILE_NOTE, help=table.KERAS3_RULE_HELP)
