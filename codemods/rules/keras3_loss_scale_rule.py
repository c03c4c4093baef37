"""LSO022: a note, on --target keras3, at each loss scale optimizer of TF 2.4-2.15 (or
experimental) code: after the migration Keras 3's class runs it, whose dynamic rule differs by
design. Said once per optimizer here rather than in every other rule's message.

And a finding where Keras 3's class cannot run the code at all: a step that a tf.distribute
strategy runs per replica (`strategy.run(step_fn)`, TF official models' custom loop) and that
applies gradients through a loss scale optimizer made in the module. Under MirroredStrategy with
more than one replica, Keras 3's LossScaleOptimizer fails in the first step ("You must feed a
value for placeholder tensor ... cond"; keras-team/keras#19246, #18666), and, built beforehand,
it applies a step whose non-finite gradients are on one replica only; compat_lso's class (the
shim target) runs it as TF 2.4-2.15 did.

A file that builds no loss scale optimizer but sets a policy that may be 'mixed_float16' gets the
note at each `model.compile(...)` (where Keras 3 wraps the optimizer in its own class), or at the
policy statement where the file compiles nothing: the wrapper Keras 2 made counted skipped steps
in `iterations`, which learning-rate schedules and Adam's bias correction read."""

from __future__ import annotations

import ast
import re

from codemods import table
from codemods.meaning.module import Context
from codemods.rules import _subclass
from codemods.rules._tf24 import bind, constructions, evidence, instances
from codemods.rules.compile_loss_scale_optimizer import compile_calls, possible_policies
from codemods.rules.loss_scale_optimizer_call import Untranslatable, arguments, translate

CODE = "LSO022"
# What runs a function once per replica, on a receiver written like a strategy.
_PER_REPLICA = frozenset({"run", "experimental_run_v2", "call_for_each_replica"})
_STRATEGY = re.compile(r"strateg|distribut", re.IGNORECASE)
_LSO_ONLY = frozenset({"get_scaled_loss", "get_unscaled_gradients"})


# Keras 3.0-3.8's wrapper did not forward `iterations` at all (keras-team/keras#20878): said too.
COMPILE_NOTE = (
    "compile() wraps in Keras 3's class: skipped steps not in `iterations` (0 before Keras 3.9)"
)

# At each loss scale optimizer that Keras 3's class runs after the migration.
DYNAMIC_RULE_NOTE = (
    "Keras 3's dynamic rule: no floor at 1, doubling unchecked, skipped steps not in `iterations`"
)


def on_module(context: Context) -> None:
    if context.target != "keras3" or evidence(context).keras3_code:
        return
    built = constructions(context)
    if not built:
        _note_compile(context)
    for call in built:
        qualified = context.qualified(call.func) or _subclass.base_of(context, call)
        if qualified in table.KERAS3_ONLY_LSO or qualified == table.SHIM_LSO:
            continue
        if _fixed(context, call, qualified):
            continue  # LSO001/LSO015 make it the inner optimizer's loss_scale_factor, or report it
        if context.wants(CODE, call) and not context.suppresses(call):  # any code's comment
            context.note(CODE, call, DYNAMIC_RULE_NOTE)
    if built and "apply_gradients" in context.source.text:
        for apply, runner in _replica_steps(context):
            if context.wants(CODE, apply):
                context.report(
                    CODE,
                    apply,
                    f"{context.source.segment(apply.func)}() per replica (line {runner.lineno}): "
                    "fails on Keras 3's class with 2+ replicas",
                    reason="no-equivalent",
                    help="--target shim: compat_lso.LossScaleOptimizer runs it as TF 2.15 did",
                )


def _replica_steps(context: Context) -> list[tuple[ast.Call, ast.Call]]:
    """(the first apply_gradients call, the strategy.run call) for each step function a strategy
    runs per replica that applies gradients through a loss scale optimizer made here."""
    found: dict[int, tuple[ast.Call, ast.Call]] = {}
    holders = instances(context).holders
    for runner in context.names.calls:
        func = runner.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in _PER_REPLICA
            and runner.args
            and _STRATEGY.search(context.source.segment(func.value))
        ):
            continue
        for step in holders.defined_by(runner.args[0]):
            if not isinstance(step, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            calls = [n for n in ast.walk(step) if isinstance(n, ast.Call)]
            if not any(_applies_through_one(context, call, calls) for call in calls):
                continue
            applies = [call for call in calls if _method(call) == "apply_gradients"]
            first = min(applies, key=lambda call: (call.lineno, call.col_offset))
            found.setdefault(id(first), (first, runner))  # where it fails: one finding a step
    return sorted(found.values(), key=lambda pair: (pair[0].lineno, pair[0].col_offset))


def _applies_through_one(context: Context, call: ast.Call, calls: list[ast.Call]) -> bool:
    """`call` is apply_gradients on what may hold a loss scale optimizer made here, or TF 2.4's
    scaling methods (only a loss scale optimizer has them) are called in the same function."""
    method = _method(call)
    if method in _LSO_ONLY:
        return any(_method(c) == "apply_gradients" for c in calls)
    if method != "apply_gradients":
        return False
    assert isinstance(call.func, ast.Attribute)
    return instances(context).typed(call.func.value).made


def _method(call: ast.Call) -> str | None:
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def _note_compile(context: Context) -> None:
    """compile()'s own wrapping under a policy that may be 'mixed_float16' (tf_keras's setters
    are not among them: it keeps Keras 2's class), where nothing here builds a loss scale
    optimizer."""
    policies = possible_policies(context)
    compiles = compile_calls(context)
    if not policies or (
        not compiles and any(f.code == "LSO006" and f.note for f in context.findings)
    ):
        return  # LSO006's note at the Policy whose loss scale it dropped says it already
    for node in compiles or policies[:1]:
        if context.wants(CODE, node) and not context.suppresses(node):
            context.note(CODE, node, COMPILE_NOTE, help=table.KERAS3_RULE_HELP)


def _fixed(context: Context, call: ast.Call, qualified: str | None) -> bool:
    """A fixed scale as written: no Keras 3 LossScaleOptimizer, so no dynamic rule, runs it."""
    if qualified in table.OLD_LSO:  # experimental: a number, FixedLossScale(N) (LSO001's reading)
        try:
            return ("dynamic", "False") in translate(context, arguments(call)[1]).keywords
        except Untranslatable:
            return False  # only known at run time: LSO001 reports it, the note stays
    dynamic = bind(call).arguments.get("dynamic")
    if isinstance(dynamic, ast.keyword):
        dynamic = dynamic.value
    return isinstance(dynamic, ast.Constant) and dynamic.value is False
