"""LSO006: experimental.Policy -> Policy; its loss_scale argument is dropped where that is exact.

The loss scale of an experimental Policy (Keras's PolicyV1) was read in one place: `Model.compile`
(TF 2.4-2.8, keras/engine/training.py `_get_optimizer`) wrapped the optimizer with it, and with
`'dynamic'` for a new Policy named 'mixed_float16', nothing otherwise. Keras 2.9-2.15 wraps for a
Policy named 'mixed_float16' and nothing else, and so does Keras 3 (`auto_scale_loss`, on by
default); every one of them with the default dynamic scale (2**15, doubled after 2000 finite
steps), which is what `'dynamic'` (DynamicLossScale()) meant. So the argument goes where the new
Policy gets the same wrapping:

- `loss_scale="auto"` (the old default: dynamic for 'mixed_float16', none otherwise), any name;
- `loss_scale="dynamic"` with the name 'mixed_float16';
- `loss_scale=None` with a literal name other than 'mixed_float16' (no loss scaling either way);
- `DynamicLossScale()` (all its arguments the defaults) with the name 'mixed_float16'.

And whatever it is where every compile() of the module gets a loss scale optimizer (made here,
followed through names, attributes, returns: codemods/meaning/instances.py): compile() leaves one
as it is on every Keras, so the loss scale was never read, and dropping it changes no number (a
note says so; issue 38's GAN: `Policy('mixed_float16', loss_scale=1024)` beside an experimental
LossScaleOptimizer(opt, 'dynamic') in a class `__init__`, whose help proposed initial_scale=1024).

Anything else (a number, a LossScale, 'dynamic' on another policy, None on 'mixed_float16', a
value or a name only known at run time) would change what compile does: reported, with a help
for what reaches compile() (a number: a fixed scale; None, a default included: none, which
Keras 2 spells as a fixed scale of 1 and Keras 3 as auto_scale_loss=False), or on --target
shim moved to compat_lso.experimental.Policy, which keeps the loss scale and applies it in
compile once compat_lso.install() has run: the shim target adds that call (`Fix.installs`), as it
does where a dropped loss scale leaves a 'mixed_float16' model to compile()'s own wrapping (Keras
3's class otherwise, whose rule differs; keras3 gets a note there).
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.assignments import Reaching
from codemods.meaning.module import Context
from codemods.rules._rename import arrow, rename, short
from codemods.rules._tf24 import instances
from codemods.rules.loss_scale_optimizer_call import Untranslatable, remove_argument, translate
from codemods.table import Why, reason_of

CODE = "LSO006"
SHIM_POLICY = f"{table.SHIM_EXPERIMENTAL}.Policy"
_MIXED_FLOAT16 = "mixed_float16"


# The last part of every name `callee` accepts (the registry resolves no other attribute call).
CALLEE_ENDS = frozenset({"Policy"})


def callee(qualified: str) -> bool:
    """The calls this rule looks at, by what the callee means (the registry dispatches on it)."""
    return table.classify(qualified) == (CODE, "Policy")


def on_call(context: Context, call: ast.Call) -> bool:
    qualified = context.qualified(call.func)
    if qualified is None or not callee(qualified):
        return False
    given = _arguments(call)
    if given is not None and "loss_scale" not in given:
        return False  # a plain Policy(name) is a rename, done when the reference is visited
    context.claim(call.func)
    if not context.wants(CODE, call):
        return True
    dead = _compiles_given_one(context) if given is not None else []
    why = None if dead else _why_not_droppable(context, given)
    if why is None:
        assert given is not None
        _drop_loss_scale(context, call, qualified, given, dead)
    elif context.target == "shim":
        _keep_on_shim(context, call, qualified, why[0])
    else:
        reason, help = why
        context.report(
            CODE,
            call,
            f"{short(qualified)} not rewritten: {reason}",
            reason=reason_of(reason, "no-equivalent"),
            help=help,
        )
        for argument in (*call.args, *call.keywords):
            for node in ast.walk(argument):
                context.claim(node)  # left exactly as written, for the manual migration
    return True


def _arguments(call: ast.Call) -> dict[str, ast.expr | ast.keyword] | None:
    """PolicyV1(name, loss_scale='auto')'s arguments as written; None when they cannot be bound."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    keywords = {k.arg: k for k in call.keywords if k.arg is not None}
    positional = dict(zip(("name", "loss_scale"), call.args, strict=False))
    if (
        len(call.args) > 2
        or set(keywords) - {"name", "loss_scale"}
        or set(positional) & set(keywords)
    ):
        return None
    return {**positional, **keywords}


def _value(argument: ast.expr | ast.keyword) -> ast.expr:
    return argument.value if isinstance(argument, ast.keyword) else argument


def _compiles_given_one(context: Context) -> list[ast.Call]:
    """The module's compile() calls, where there is one and each is given a loss scale optimizer
    made here (and only that); else []."""
    compiles = [
        call
        for call in context.names.calls
        if isinstance(call.func, ast.Attribute)
        and call.func.attr == "compile"
        and context.qualified(call.func) is None  # not re.compile
    ]
    typed = instances(context)
    for call in compiles:
        given = next((k.value for k in call.keywords if k.arg == "optimizer"), None)
        optimizer = given if given is not None else (call.args[0] if call.args else None)
        found = typed.typed(optimizer) if optimizer is not None else None
        if found is None or found.kinds != {"made"} or not found.calls:
            return []
    return compiles


def _why_not_droppable(
    context: Context, given: dict[str, ast.expr | ast.keyword] | None
) -> tuple[str, str | None] | None:
    """None where the new Policy(name) gets the same loss scaling in compile; else the reason,
    and the help where it is not the rule's own."""
    if given is None:
        return Why(
            "run-time", "its arguments are unpacked with * or **, or not (name, loss_scale)"
        ), None
    reason = _reason(context, given)
    if reason is None:
        return None
    loss_scale = _value(given["loss_scale"])
    helps = {}
    if isinstance(loss_scale, (ast.Name, ast.Attribute)) and _may_be_mixed(given):
        helps = table.POLICY_RUN_TIME_HELP
    elif isinstance(loss_scale, ast.Constant) and loss_scale.value is None:
        helps = table.POLICY_NONE_HELP
    return reason, helps.get(context.target)


def _may_be_mixed(given: dict[str, ast.expr | ast.keyword]) -> bool:
    name = _value(given["name"]) if "name" in given else None
    return not isinstance(name, ast.Constant) or name.value == _MIXED_FLOAT16


def _reason(context: Context, given: dict[str, ast.expr | ast.keyword]) -> str | None:
    loss_scale = _value(given["loss_scale"])
    name = _value(given["name"]) if "name" in given else None
    written_name = name.value if isinstance(name, ast.Constant) else None
    if isinstance(loss_scale, ast.Constant) and loss_scale.value == "auto":
        return None
    if isinstance(loss_scale, ast.Constant) and loss_scale.value == "dynamic":
        if written_name == _MIXED_FLOAT16:
            return None
        if isinstance(written_name, str):
            fact = (
                f"compile loss-scaled a {written_name!r} model for this Policy, not for the new one"
            )
            return Why("no-equivalent", fact)
        return Why("run-time", "the policy's name is only known at run time")
    if isinstance(loss_scale, ast.Constant) and loss_scale.value is None:
        if isinstance(written_name, str) and written_name != _MIXED_FLOAT16:
            return None
        if written_name == _MIXED_FLOAT16:
            return Why(
                "no-equivalent",
                "loss_scale=None meant no loss scaling, but compile loss-scales every "
                "'mixed_float16' model",
            )
        return Why("run-time", "the policy's name is only known at run time")
    if written_name == _MIXED_FLOAT16 and _is_default_dynamic(context, loss_scale):
        return None  # DynamicLossScale() with the default arguments: what 'dynamic' meant
    written = " ".join(context.source.segment(loss_scale).split())
    if len(written) > 40:
        written = written[:37] + "..."
    plain = isinstance(loss_scale, (ast.Name, ast.Attribute))
    if plain and isinstance(written_name, str) and written_name != _MIXED_FLOAT16:
        return Why(
            "no-equivalent",
            f"loss_scale={written}: compile() scaled a {written_name!r} model by it, not now",
        )
    if plain:
        # Known at run time: 'dynamic' could go, a number or None could not (no program can tell
        # which): what compile() did with each.
        now = "now dynamically" + ("" if written_name == _MIXED_FLOAT16 else " for mixed_float16")
        seen = _none_seen(context, loss_scale)
        return Why(
            "run-time", f"loss_scale={written}{seen}: compile() scaled by a number, or not; {now}"
        )
    return Why("no-equivalent", f"loss_scale={written} would no longer reach the optimizer")


def _none_seen(context: Context, loss_scale: ast.expr) -> str:
    """Where the module shows None reaching a loss_scale name: ` (default None)`, ` (None at
    line 4)`, else ''."""
    if not isinstance(loss_scale, ast.Name):
        return ""
    reaching = Reaching(context)
    for statement, value, _ in reaching.of(loss_scale):
        if isinstance(statement, ast.arg):
            arguments = reaching.parent(statement)
            if isinstance(arguments, ast.arguments) and _is_none(_default(arguments, statement)):
                return " (default None)"
        elif _is_none(value):
            return f" (None at line {getattr(statement, 'lineno', '?')})"
    return ""


def _default(arguments: ast.arguments, parameter: ast.arg) -> ast.expr | None:
    positional = [*arguments.posonlyargs, *arguments.args]
    if parameter in positional:
        at = positional.index(parameter) - (len(positional) - len(arguments.defaults))
        return arguments.defaults[at] if at >= 0 else None
    if parameter in arguments.kwonlyargs:
        return arguments.kw_defaults[arguments.kwonlyargs.index(parameter)]
    return None


def _is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_default_dynamic(context: Context, loss_scale: ast.expr) -> bool:
    """A DynamicLossScale(...) written here whose arguments are all the defaults."""
    if not isinstance(loss_scale, ast.Call):
        return False
    try:
        translation = translate(context, loss_scale)
    except Untranslatable:
        return False
    qualified = context.qualified(loss_scale.func)
    return qualified in table.DYNAMIC_LOSS_SCALE and not translation.keywords


def _drop_loss_scale(
    context: Context,
    call: ast.Call,
    qualified: str,
    given: dict[str, ast.expr | ast.keyword],
    dead: list[ast.Call],
) -> None:
    new = table.new_home(qualified, context.target)
    spelled = context.spell(call.func, new) if new is not None else None
    if new is None or spelled is None:
        context.report(
            CODE, call, f"{short(qualified)} not rewritten: cannot write it here", reason="limit"
        )
        return
    loss_scale = given["loss_scale"]
    for node in ast.walk(loss_scale):
        context.claim(node)  # gone with the argument: no other rule rewrites inside it
    written = context.source.segment(_value(loss_scale))
    name = _value(given["name"]) if "name" in given else None
    # Where every compile() gets a loss scale optimizer, none wraps: nothing to install or note.
    may_wrap = not dead and (not isinstance(name, ast.Constant) or name.value == _MIXED_FLOAT16)
    context.fix(
        CODE,
        call,
        arrow(qualified, new, f"(name, loss_scale={written})", "(name)"),
        [context.edit(call.func, spelled.text), *remove_argument(context, call, loss_scale)],
        consumes=context.loads_in(call.func) | context.loads_in(loss_scale),
        spellings=[spelled],
        manual=f"{short(qualified)}(..., loss_scale=...)",
        # Keras 3's compile() wraps in its own class: install() makes it TF 2.15's (shim).
        installs=context.target == "shim" and may_wrap,
    )
    if dead:
        lines = ", ".join(str(c.lineno) for c in dead)
        context.note(
            CODE,
            call,
            f"loss_scale={written} was never read: every compile() here gets a loss scale "
            f"optimizer (line{'s' if len(dead) > 1 else ''} {lines}); no number changes",
            help=table.POLICY_DEAD_HELP,
        )
    if context.target == "keras3" and may_wrap:
        # Keras 2.9-2.15 wrap in TF 2.4's class; Keras 3's compile() in its own, other rule.
        note = (
            "compile() then wraps in Keras 3's LossScaleOptimizer, whose rule differs "
            "(--explain LSO022)"
        )
        context.note(CODE, call, note, help=table.KERAS3_RULE_HELP)


def _keep_on_shim(context: Context, call: ast.Call, qualified: str, reason: str) -> None:
    spelled = context.spell(call.func, SHIM_POLICY)
    if spelled is None:
        context.report(
            CODE, call, f"{short(qualified)} not rewritten: cannot write it here", reason="limit"
        )
        return
    # compile() applies the kept loss scale once compat_lso.install() has run: added with it.
    context.fix(
        CODE,
        call,
        f"{arrow(qualified, SHIM_POLICY)} (loss scale kept, compat_lso.install() added)",
        [context.edit(call.func, spelled.text)],
        consumes=context.loads_in(call.func),
        spellings=[spelled],
        help=f"install() makes compile() apply it; with the new Policy: {reason}",
        installs=True,
    )


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    rename(context, node, CODE, table.new_home(qualified, context.target), qualified)
