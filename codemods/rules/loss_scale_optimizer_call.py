"""LSO001: experimental.LossScaleOptimizer(optimizer, loss_scale) -> LossScaleOptimizer(...).

The translation is the old class's own constructor logic (TF 2.4): 'dynamic' -> the defaults; a
number or FixedLossScale(N) -> dynamic=False, initial_scale=N; DynamicLossScale(a, b) ->
initial_scale=a, dynamic_growth_steps=b with literal defaults omitted; a multiplier other than 2
has no equivalent. The arguments of a FixedLossScale/DynamicLossScale written inside the call may
be any expression: they move, as written and in the order written, into the keywords that take
their place, so they are evaluated exactly as before (after the arguments before them, once). One
bound to a name earlier (`scale = DynamicLossScale(n)`) is followed only with literal arguments:
moving `n` down to the call would evaluate it later. A loss_scale only known at run time is
reported, or on --target shim kept on compat_lso.experimental.LossScaleOptimizer, which still
takes it.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass, field
from typing import TypeAlias, TypeGuard

from codemods import table
from codemods.meaning.module import Context, delete_statement
from codemods.rules import _fixed_scale, _runtime_scale
from codemods.rules._rename import arrow, short
from codemods.source import Edit
from codemods.table import Reason, Why, reason_of

CODE = "LSO001"

# A call argument as written: positional (the expression) or by keyword (the whole `name=value`).
Argument: TypeAlias = ast.expr | ast.keyword


@dataclass
class Translation:
    keywords: list[tuple[str, str]] = field(default_factory=list)  # (new keyword, source text)
    followed: ast.stmt | None = None  # `scale = DynamicLossScale(...)` to delete with the call
    consumes: set[int] = field(default_factory=set)


class Untranslatable(Exception):
    """The loss scale cannot be known statically; the message says why, `reason` in one word."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(message)
        self.reason: Reason = reason


# The last part of every name `callee` accepts (the registry resolves no other attribute call).
CALLEE_ENDS = frozenset(name.rpartition(".")[2] for name in table.OLD_LSO)


def callee(qualified: str) -> bool:
    """The calls this rule looks at, by what the callee means (the registry dispatches on it)."""
    return qualified in table.OLD_LSO


def on_call(context: Context, call: ast.Call) -> bool:
    qualified = context.qualified(call.func)
    if qualified is None or not callee(qualified):
        return False
    context.claim(call.func)
    if not context.wants(CODE, call):
        return True
    try:
        optimizer, loss_scale = arguments(call)
        translation = translate(context, loss_scale)
        if context.target == "keras3" and ("dynamic", "False") in translation.keywords:
            _keras3_fixed(context, call, qualified, optimizer, translation)
            return True
    except Untranslatable as reason:
        why = _at_run_time(context, call, qualified, Why(reason.reason, str(reason)))
        if why is None:
            return True
        if context.target != "shim":
            context.report(
                CODE,
                call,
                f"{short(qualified)} not rewritten: {why}",
                reason=reason_of(why, reason.reason),
            )
            for argument in (*call.args, *call.keywords):
                for node in ast.walk(argument):
                    context.claim(node)  # left exactly as written, for the manual migration
            return True
        # The shim keeps the old constructor: only the name changes, so the code keeps working.
        kept_on = f"{table.SHIM_EXPERIMENTAL}.LossScaleOptimizer"
        spelled = context.spell(call.func, kept_on)
        if spelled is None:
            context.report(
                CODE,
                call,
                f"{short(qualified)} not rewritten: cannot write {kept_on} here",
                reason="limit",
            )
            return True
        context.fix(
            CODE,
            call,
            f"{arrow(qualified, kept_on)} (loss scale kept)",
            [context.edit(call.func, spelled.text)],
            consumes=context.loads_in(call.func),
            spellings=[spelled],
            help=f"the loss scale stays, as {reason}",
        )
        return True
    new = table.SHIM_LSO if context.target == "shim" else table.new_home(qualified, context.target)
    spelled = context.spell(call.func, new) if new is not None else None
    if new is None or spelled is None:
        context.report(
            CODE,
            call,
            f"{short(qualified)} not rewritten: cannot write {short(new or '')} here",
            reason="limit",
        )
        return True
    edits = [
        context.edit(call.func, spelled.text),
        *argument_edits(context, call, optimizer, loss_scale, translation),
    ]
    if translation.followed is not None:
        edits.append(delete_statement(context, translation.followed))
    for translated in (loss_scale, translation.followed):
        for node in ast.walk(translated) if translated is not None else ():
            context.claim(node)  # the loss scale's own names are gone with it
    described = ", ".join(f"{k}={v}" for k, v in translation.keywords)
    context.fix(
        CODE,
        call,
        arrow(qualified, new, new_suffix=f"(..., {described})" if described else ""),
        edits,
        consumes=context.loads_in(call.func) | translation.consumes,
        spellings=[spelled],
        manual=short(qualified),
    )
    return True


def _at_run_time(context: Context, call: ast.Call, qualified: str, reason: Why) -> Why | None:
    """A loss_scale only known at run time, converted where the code runs (keras2, keras3:
    codemods/rules/_runtime_scale.py): None when rewritten, else why not, from `reason`
    (why it is not translated statically)."""
    try:
        optimizer, loss_scale = arguments(call)
    except Untranslatable:
        return reason
    value = loss_scale.value if isinstance(loss_scale, ast.keyword) else loss_scale
    found = _runtime_scale.may_be_an_object(context, value)
    if context.target != "shim" and found is not None:  # said instead of "only known at run time"
        return Why("elsewhere", f"loss_scale may be a LossScale object: {found}")
    if context.target == "keras3":
        inner = optimizer.value if isinstance(optimizer, ast.keyword) else optimizer
        added = _runtime_scale.keras3(context, call, qualified, inner, value)
        return None if added is None else Why(reason.reason, reason + added)
    converted = _runtime_scale.keywords(context, value)
    new = table.new_home(qualified, context.target)
    spelled = context.spell(call.func, new) if converted and new else None
    if spelled is None or new is None or converted is None:
        return reason
    translation = Translation(keywords=converted)
    edits = [context.edit(call.func, spelled.text)]
    edits += argument_edits(context, call, optimizer, loss_scale, translation)
    for node in ast.walk(value):
        context.claim(node)  # read as written, now twice
    context.fix(
        CODE,
        call,
        _runtime_scale.message(qualified, new, context.source.segment(value)),
        edits,
        consumes=context.loads_in(call.func),
        spellings=[spelled],
        manual=short(qualified),
        help=_runtime_scale.HELP,
    )
    return None


def _keras3_fixed(
    context: Context, call: ast.Call, qualified: str, optimizer: Argument, translation: Translation
) -> None:
    """Keras 3 has no fixed LossScaleOptimizer: the inner optimizer's loss_scale_factor, where
    exact (codemods/rules/_fixed_scale.py, shared with LSO015), else Untranslatable."""
    scale = dict(translation.keywords)["initial_scale"]
    inner = optimizer.value if isinstance(optimizer, ast.keyword) else optimizer
    rewritten = _fixed_scale.rewrite(context, call, inner, scale)
    if isinstance(rewritten, str):
        raise Untranslatable(
            "keras3-fixed", f"Keras 3 has no fixed LossScaleOptimizer, and {rewritten}"
        )
    edits = list(rewritten.edits)
    if translation.followed is not None:
        edits.append(delete_statement(context, translation.followed))
    for node in (call, translation.followed):
        for child in ast.walk(node) if node is not None else ():
            context.claim(child)
    context.fix(
        CODE,
        call,
        _fixed_scale.fixed_message(short(qualified), scale, rewritten),
        edits,
        consumes=context.loads_in(call.func) | translation.consumes,
        help=_fixed_scale.FIXED_HELP,
    )


def arguments(call: ast.Call) -> tuple[Argument, Argument]:
    """The optimizer and loss_scale arguments as written."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        raise Untranslatable("run-time", "the arguments are unpacked with * or **")
    keywords = {k.arg: k for k in call.keywords if k.arg is not None}
    unknown = set(keywords) - {"optimizer", "loss_scale"}
    if unknown or len(call.args) > 2:
        raise Untranslatable(
            "invalid", f"unexpected arguments {sorted(unknown) or 'beyond (optimizer, loss_scale)'}"
        )
    positional = dict(zip(("optimizer", "loss_scale"), call.args, strict=False))
    if set(positional) & set(keywords):
        raise Untranslatable("invalid", "an argument is given twice")
    arguments: dict[str, Argument] = {**positional, **keywords}
    if "optimizer" not in arguments or "loss_scale" not in arguments:
        raise Untranslatable("invalid", "optimizer or loss_scale is missing")
    return arguments["optimizer"], arguments["loss_scale"]


def translate(context: Context, argument: Argument) -> Translation:
    value = argument.value if isinstance(argument, ast.keyword) else argument
    translation = Translation(consumes=context.loads_in(value))
    if isinstance(value, ast.Name):
        bound = context.names.single_value(value)
        bound_value = bound.value if bound is not None else None
        if bound is None or not _is_loss_scale_call(bound_value, context):
            raise Untranslatable("run-time", f"loss_scale={value.id} is only known at run time")
        if len(context.names.body_of.get(id(bound.statement), ())) < 2 or not isinstance(
            bound.statement, ast.Assign
        ):
            raise Untranslatable(
                "limit", f"loss_scale={value.id} is bound where it cannot be removed"
            )
        translation.followed = bound.statement
        translation.consumes |= context.loads_in(bound.statement)
        value = bound_value
    if isinstance(value, ast.Constant) and value.value == "dynamic":
        return translation
    if _number(value) is not None:
        translation.keywords = _fixed(context, value)
        return translation
    if not _is_loss_scale_call(value, context):
        raise Untranslatable(
            "run-time", f"loss_scale={context.source.segment(value)} is only known at run time"
        )
    qualified = context.qualified(value.func)
    if any(isinstance(a, ast.Starred) for a in value.args) or any(
        k.arg is None for k in value.keywords
    ):
        raise Untranslatable("run-time", "the loss scale's arguments are unpacked with * or **")
    # Arguments that are not literals are moved as written only when the loss scale is written
    # in the call itself: from `scale = DynamicLossScale(n)` further up, `n` would be evaluated
    # later than it was, perhaps with another value.
    movable = translation.followed is None
    if qualified in table.FIXED_LOSS_SCALE:
        given = _bind(value, ("loss_scale_value",))
        fixed = given.get("loss_scale_value")
        if fixed is None or not (movable or _number(fixed) is not None):
            raise Untranslatable("run-time", "FixedLossScale's value is only known at run time")
        translation.keywords = _fixed(context, fixed)
        return translation
    given = _bind(value, table.DYNAMIC_LOSS_SCALE_PARAMS)
    multiplier = given.get("multiplier")
    if multiplier is not None and _number(multiplier) != 2:
        written = context.source.segment(multiplier)
        raise Untranslatable(
            "no-equivalent" if _number(multiplier) is not None else "run-time",
            f"DynamicLossScale multiplier {written} is not 2; the new class always doubles and "
            "halves"
            if _number(multiplier) is not None
            else f"DynamicLossScale multiplier {written} is only known at run time (the new "
            "class always doubles and halves)",
        )
    if not movable:
        for name, node in given.items():
            if _number(node) is None:
                raise Untranslatable(
                    "run-time", f"DynamicLossScale({name}=...) is only known at run time"
                )
    # In the order written, so that the arguments are evaluated in the same order as before.
    for old, node in sorted(given.items(), key=lambda item: _position(item[1])):
        new = table.NEW_KEYWORDS.get(old)
        if new is not None and _number(node) != table.DYNAMIC_LOSS_SCALE_DEFAULTS[old]:
            translation.keywords.append((new, context.source.segment(node)))
    return translation


def _position(node: ast.expr) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _fixed(context: Context, value: ast.expr) -> list[tuple[str, str]]:
    return [("dynamic", "False"), ("initial_scale", context.source.segment(value))]


def _is_loss_scale_call(value: ast.AST | None, context: Context) -> TypeGuard[ast.Call]:
    return isinstance(value, ast.Call) and context.qualified(value.func) in (
        table.FIXED_LOSS_SCALE | table.DYNAMIC_LOSS_SCALE
    )


def _bind(call: ast.Call, params: tuple[str, ...]) -> dict[str, ast.expr]:
    if len(call.args) > len(params) or any(k.arg not in params for k in call.keywords):
        raise Untranslatable("invalid", "the loss scale has unexpected arguments")
    given = dict(zip(params, call.args, strict=False))
    for keyword in call.keywords:
        assert keyword.arg is not None  # `**kwargs` was refused by the caller
        if keyword.arg in given:
            raise Untranslatable("invalid", f"{keyword.arg} is given twice")
        given[keyword.arg] = keyword.value
    return given


_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def _number(node: ast.AST) -> float | None:
    """The value of a numeric literal expression (`2**15`, `-1.0`, `1e3`), or None."""
    match node:
        case ast.Constant(value=bool()):
            return None
        case ast.Constant(value=int() | float() as value):
            return value
        case ast.UnaryOp(op=ast.USub() | ast.UAdd() as op, operand=operand):
            inner = _number(operand)
            return None if inner is None else (-inner if isinstance(op, ast.USub) else inner)
        case ast.BinOp(left=left, op=op, right=right) if type(op) in _OPERATORS:
            a, b = _number(left), _number(right)
            if a is None or b is None or (isinstance(op, ast.Pow) and abs(b) > 1024):
                return None
            try:
                result = _OPERATORS[type(op)](a, b)
            except (ArithmeticError, ValueError):
                return None
            return result if isinstance(result, (int, float)) and math.isfinite(result) else None
    return None


def argument_edits(
    context: Context,
    call: ast.Call,
    optimizer: Argument,
    loss_scale: Argument,
    translation: Translation,
) -> list[Edit]:
    source = context.source
    edits = []
    if isinstance(optimizer, ast.keyword):
        start = source.offset(optimizer.lineno, optimizer.col_offset)
        edits.append(Edit(start, start + len("optimizer"), "inner_optimizer"))
    start, end = source.span(loss_scale)
    if translation.keywords:
        edits.append(Edit(start, end, ", ".join(f"{k}={v}" for k, v in translation.keywords)))
        return edits
    return [*edits, *remove_argument(context, call, loss_scale)]


def remove_argument(context: Context, call: ast.Call, argument: Argument) -> list[Edit]:
    """Remove one argument of a call and one comma beside it; the rest keeps its layout.

    A comment between the argument and its neighbour stays: then only the argument and the comma
    are removed, not the text between them.
    """
    source = context.source
    start, end = source.span(argument)
    written: list[Argument] = [*call.args, *call.keywords]
    ordered = sorted(written, key=lambda n: (n.lineno, n.col_offset))
    index = next(i for i, n in enumerate(ordered) if n is argument)
    if len(ordered) == 1:
        return [Edit(start, end, "")]
    if index > 0:
        gap_start, gap_end = source.span(ordered[index - 1])[1], start
        whole = Edit(gap_start, end, "")
    else:
        gap_start, gap_end = end, source.span(ordered[index + 1])[0]
        whole = Edit(start, gap_end, "")
    gap = source.text[gap_start:gap_end]
    if "#" not in gap:
        return [whole]
    comma = gap_start + gap.index(",")
    return sorted([Edit(start, end, ""), Edit(comma, comma + 1, "")], key=lambda edit: edit.start)
