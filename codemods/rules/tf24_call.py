"""LSO015: TF 2.4-2.15 calls of the non-experimental LossScaleOptimizer.

TF 2.4's signature is (inner_optimizer, dynamic=True, initial_scale=None,
dynamic_growth_steps=None); Keras 3's is (inner_optimizer, initial_scale=2**15,
dynamic_growth_steps=2000, name=None, **kwargs), which refuses dynamic=False and reads a second
positional argument as initial_scale: `LossScaleOptimizer(opt, False, 128)` silently becomes
initial_scale=False, dynamic_growth_steps=128.

- shim: the class moves to compat_lso.LossScaleOptimizer, arguments as written.
- keras3: positional arguments become keywords and dynamic=True / None defaults go; a fixed scale
  becomes the inner optimizer's loss_scale_factor where that is exact (`_fixed_scale`); anything
  else is reported.
- keras2: nothing (the TF 2.4 API is Keras 2's).

Keras 3 code (`name=`, a number in second place, or a file that shows only Keras 3's API) is
left alone on every target: see `_tf24.call_kind`.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.rules import _fixed_scale
from codemods.rules._rename import arrow, short
from codemods.rules._tf24 import (
    UNEXPECTED,
    Argument,
    Bound,
    bind,
    call_kind,
    is_bool,
    is_none,
    remove_arguments,
    value,
)
from codemods.rules.tf24_reference import alias_moves
from codemods.source import Edit, one_line

CODE = "LSO015"


# The last part of every name `callee` accepts (the registry resolves no other attribute call).
CALLEE_ENDS = frozenset(name.rpartition(".")[2] for name in table.TF24_LSO)


def callee(qualified: str) -> bool:
    """The calls this rule looks at, by what the callee means (the registry dispatches on it)."""
    return qualified in table.TF24_LSO


def on_call(context: Context, call: ast.Call) -> bool:
    qualified = context.qualified(call.func)
    if qualified is None or not callee(qualified):
        return False
    context.claim(call.func)
    if not context.wants(CODE, call):
        return True
    bound = bind(call)
    if call_kind(context, bound) == "keras3":
        return True
    if context.target == "shim" and bound.problem.startswith(UNEXPECTED):
        # Not TF 2.4 code (often the experimental class's loss_scale= on the new class): moving
        # it would claim a meaning it never had.
        context.report(
            CODE,
            call,
            f"{short(qualified)} not moved: {bound.problem}, which TF 2.4's class refused too",
            reason="invalid",
            help=f"(optimizer, loss_scale) is the experimental signature: use "
            f"{table.SHIM_EXPERIMENTAL_LSO}",
        )
    elif context.target == "shim":
        _move_to_shim(context, call, qualified)
    else:
        _to_keras3(context, call, qualified, bound)
    return True


def _move_to_shim(context: Context, call: ast.Call, qualified: str) -> None:
    func = call.func
    if isinstance(func, ast.Name):
        binding = context.names.binding_of(func)
        if binding is not None and binding.alias_of is not None and alias_moves(context, binding):
            return  # `LSO = tf.keras...LossScaleOptimizer`: LSO016 re-points the alias itself
    spelled = context.spell(func, table.SHIM_LSO)
    if spelled is None:
        context.report(
            CODE,
            call,
            f"{short(qualified)} not moved: cannot write compat_lso here",
            reason="limit",
        )
        return
    context.fix(
        CODE,
        call,
        f"{arrow(qualified, table.SHIM_LSO)} (TF 2.4 arguments and meaning kept)",
        [context.edit(func, spelled.text)],
        consumes=context.loads_in(func),
        spellings=[spelled],
    )


def _to_keras3(context: Context, call: ast.Call, qualified: str, bound: Bound) -> None:
    name = short(qualified)
    if bound.problem:
        unpacked = not bound.problem.startswith(UNEXPECTED) and "twice" not in bound.problem
        context.report(
            CODE,
            call,
            f"{name} not rewritten: {bound.problem}",
            reason="run-time" if unpacked else "invalid",
        )
        return
    arguments = bound.arguments
    dynamic = arguments.get("dynamic")
    if dynamic is not None and not is_bool(value(dynamic)):
        written = context.source.segment(value(dynamic))
        where = (
            "dynamic=" if isinstance(dynamic, ast.keyword) else "the second positional argument "
        )
        context.report(
            CODE,
            call,
            f"{name} not rewritten: {where}{written} is only known at run time (TF 2.4 reads "
            "it as `dynamic`, Keras 3 as initial_scale)",
            reason="run-time",
        )
        return
    if dynamic is not None and isinstance(flag := value(dynamic), ast.Constant) and not flag.value:
        _fixed(context, call, name, arguments)
        return
    edits: list[Edit] = []
    removed: list[Argument] = []
    kept: list[str] = []
    for parameter in ("dynamic", "initial_scale", "dynamic_growth_steps"):
        argument = arguments.get(parameter)
        if argument is None:
            continue
        if parameter == "dynamic" or is_none(value(argument)):
            removed.append(argument)  # None: Keras 3's defaults are TF 2.4's
        elif isinstance(argument, ast.keyword):
            kept.append(f"{parameter}={context.source.segment(argument.value)}")
        else:
            start = context.source.span(argument)[0]
            edits.append(Edit(start, start, f"{parameter}="))
            kept.append(f"{parameter}={context.source.segment(argument)}")
    edits += remove_arguments(context, call, removed)
    if not edits:
        return  # already spelled as Keras 3 reads it
    context.fix(
        CODE,
        call,
        f"{name}: TF 2.4 arguments -> Keras 3 keywords ({', '.join(kept) or 'defaults'}; "
        "dynamic dropped)",
        edits,
        consumes=set(),
        help=table.KERAS3_BEHAVIOUR,
    )


def _fixed(context: Context, call: ast.Call, name: str, arguments: dict[str, Argument]) -> None:
    scale = arguments.get("initial_scale")
    growth = arguments.get("dynamic_growth_steps")
    if scale is None or is_none(value(scale)):
        context.report(
            CODE,
            call,
            f"{name} not rewritten: dynamic=False needs an initial_scale",
            reason="invalid",
        )
        return
    if growth is not None and not is_none(value(growth)):
        context.report(
            CODE,
            call,
            f"{name} not rewritten: dynamic=False takes no dynamic_growth_steps",
            reason="invalid",
        )
        return
    inner = value(arguments["inner_optimizer"])
    scale_text = context.source.segment(value(scale))
    rewritten = _fixed_scale.rewrite(context, call, inner, scale_text)
    if isinstance(rewritten, str):
        context.report(
            CODE,
            call,
            f"{name}(dynamic=False) not rewritten: Keras 3 has no fixed scale; {rewritten}",
            reason="keras3-fixed",
            # Not the rule's general help (drop `dynamic`): that would make it dynamic.
            help="a fixed scale: drop the wrapper, give the inner optimizer loss_scale_factor="
            f"{one_line(scale_text, 20)} and compile(..., auto_scale_loss=False) "
            "(--explain LSO015)",
        )
        return
    for node in ast.walk(call):
        context.claim(node)
    context.fix(
        CODE,
        call,
        _fixed_scale.fixed_message(name, scale_text, rewritten),
        rewritten.edits,
        consumes=context.loads_in(call.func),
        help=_fixed_scale.FIXED_HELP,
    )
