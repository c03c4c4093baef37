"""LSO008: enable_mixed_precision_graph_rewrite left the TF2 API, its disable_ counterpart with it.

--target shim rewrites both to compat_lso.experimental's, the functions `python -m compat_lso
run` gives the old names (TF 2.4-2.8's meaning for a Keras optimizer, TensorFlow's own TF1
function for a tf.compat.v1 one).

keras2 and keras3 have no one function for both kinds of optimizer, so the kind of `opt` decides
(codemods/meaning/optimizer_kind.py), where the module shows it:

- a tf.compat.v1.train optimizer: TensorFlow's TF1 function,
  `tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt, loss_scale)`, the one
  TF 2.4-2.8 called for it;
- a Keras optimizer: what TF 2.4-2.8's function did with one (tensorflow/python/training/
  experimental/mixed_precision.py at v2.8.0: wrap it in Keras's experimental LossScaleOptimizer
  with that loss_scale, then `config.set_optimizer_experimental_options({'auto_mixed_precision':
  True})`), written as the statement
  `tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})` before the call's
  and `LossScaleOptimizer(opt, <the loss_scale as LSO001 translates it>)` in its place.

Elsewhere (a parameter, an attribute, a call of another module) both are written, and
`isinstance(opt, tf.compat.v1.train.Optimizer)` chooses where the code runs, as TF 2.4-2.8's
function chose (codemods/rules/_kind_at_run_time.py); the finding stays where that cannot be
written exactly, and where the module shows `opt` to be a loss scale optimizer, which TF 2.4-2.8
refused. `disable_` becomes TensorFlow's TF1 function, which still turns grappler's pass off.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context, delete_statement
from codemods.meaning.optimizer_kind import KERAS, V1, Kind, kind_of
from codemods.rules import _kind_at_run_time, _runtime_scale
from codemods.rules._rename import rename, short
from codemods.rules.keras3_loss_scale_rule import CODE as KERAS3_RULE
from codemods.rules.keras3_loss_scale_rule import DYNAMIC_RULE_NOTE
from codemods.rules.loss_scale_optimizer_call import Translation, Untranslatable, translate
from codemods.rules.loss_scale_optimizer_call import argument_edits as lso_argument_edits
from codemods.source import Edit, one_line
from codemods.table import Why, reason_of

CODE = "LSO008"
V1_HOME = "tensorflow.compat.v1.mixed_precision."
_EXPERIMENTAL_LSO = "tensorflow.keras.mixed_precision.experimental.LossScaleOptimizer"
_SET_OPTIONS = "tensorflow.config.optimizer.set_experimental_options"
# TensorFlow's TF1 functions of the same name: right for a TF1 optimizer, refuse a Keras one on
# TF 2.11+ (_tf1_function).
_TF1_FUNCTIONS = frozenset(
    {
        V1_HOME + "enable_mixed_precision_graph_rewrite",
        "tensorflow.compat.v1.train.experimental.enable_mixed_precision_graph_rewrite",
    }
)


# The last part of every name `callee` accepts (the registry resolves no other attribute call).
CALLEE_ENDS = frozenset({"enable_mixed_precision_graph_rewrite"})


def callee(qualified: str) -> bool:
    """The calls this rule looks at, by what the callee means (the registry dispatches on it)."""
    return qualified.endswith(".enable_mixed_precision_graph_rewrite")


def on_call(context: Context, call: ast.Call) -> bool:
    qualified = context.qualified(call.func)
    if qualified is None or not callee(qualified):
        return False
    if qualified in _TF1_FUNCTIONS:
        return _tf1_function(context, call, qualified)
    found = table.classify(qualified)
    if found is None or found[0] != CODE or context.target == "shim":
        return False
    if not context.wants(CODE, call):
        return False  # on_reference claims it
    why = _rewrite(context, call, qualified)
    if why is not None:
        context.claim(call.func)
        context.report(
            CODE, call.func, f"{short(qualified)}: {why}", reason=reason_of(why, "limit")
        )
    return True


def on_reference(context: Context, node: ast.expr, qualified: str) -> None:
    if not context.wants(CODE, node):
        context.claim(node)
    elif context.target == "shim":
        rename(context, node, CODE, table.new_home(qualified, context.target), qualified)
    elif qualified.endswith(".disable_mixed_precision_graph_rewrite"):
        # TensorFlow's TF1 function: turns grappler's pass off, as TF 2.4-2.8's did.
        new = V1_HOME + "disable_mixed_precision_graph_rewrite"
        rename(context, node, CODE, new if context.spell(node, new) else None, qualified)
    else:
        context.report(
            CODE,
            node,
            f"{short(qualified)} was removed: not called here, so no optimizer to read",
            reason="elsewhere",
        )


def _tf1_function(context: Context, call: ast.Call, qualified: str) -> bool:
    """TensorFlow's TF1 function, which TF 2.4-2.10 gave a Keras optimizer TF 2.4-2.8's meaning
    (Keras's LossScaleOptimizer, then grappler's pass) and TF 2.11+ refuses one (ValueError: not
    a tf.train.Optimizer nor a legacy Keras one, which tf.keras.optimizers' classes are from TF
    2.11). Where the module shows a Keras optimizer, that meaning is written as for LSO008's own
    call (keras2, keras3) or given compat_lso.experimental's function (shim); a tf.compat.v1 one,
    or one the module does not show, is left: the function is right for a TF1 optimizer."""
    given = _given(call)
    if isinstance(given, str):
        return False
    opt = given["opt"]
    found = kind_of(context, opt.value if isinstance(opt, ast.keyword) else opt)
    if found.kind != KERAS or not context.wants(CODE, call):
        return False
    context.claim(call.func)
    # A legacy Keras optimizer (OptimizerV2) it still takes on TF 2.11-2.15, with the same meaning.
    evidence = getattr(found.evidence, "func", None)
    legacy = isinstance(evidence, ast.expr) and ".legacy." in (context.qualified(evidence) or "")
    refused = "" if legacy else "TF 2.11+'s refuses this Keras optimizer (ValueError)"
    if context.target == "shim":
        new = f"{table.SHIM_EXPERIMENTAL}.enable_mixed_precision_graph_rewrite"
        spelled = context.spell(call.func, new)
        if spelled is None:
            context.report(
                CODE,
                call.func,
                f"{short(qualified)}: cannot write {short(new)} here",
                reason="limit",
            )
            return True
        context.fix(
            CODE,
            call.func,
            f"{short(qualified)} -> {short(new)} ({_evidence(found)})",
            [context.edit(call.func, spelled.text)],
            consumes=context.loads_in(call.func),
            spellings=[spelled],
            manual=short(qualified),
            help=refused and f"{refused}; compat_lso's does what TF 2.4-2.10's did",
        )
        return True
    why = _keras(
        context,
        call,
        qualified,
        opt=opt,
        loss_scale=given.get("loss_scale"),
        found=found,
        help=refused and f"{refused}; this is what TF 2.4-2.10's did",
    )
    if why is not None:
        context.report(
            CODE, call.func, f"{short(qualified)}: {why}", reason=reason_of(why, "limit")
        )
    return True


def _given(call: ast.Call) -> dict[str, ast.expr | ast.keyword] | str:
    """The call's (opt, loss_scale) as written, or why they cannot be read."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return Why("run-time", "its arguments are unpacked with * or **")
    given: dict[str, ast.expr | ast.keyword] = dict(
        zip(("opt", "loss_scale"), call.args, strict=False)
    )
    for keyword in call.keywords:
        if keyword.arg not in ("opt", "loss_scale") or keyword.arg in given:
            return Why("invalid", f"unexpected argument {keyword.arg}=")
        given[keyword.arg] = keyword
    if "opt" not in given or len(call.args) > 2:
        return Why("invalid", "its arguments are not (opt, loss_scale)")
    return given


def _rewrite(context: Context, call: ast.Call, qualified: str) -> str | None:
    """Rewrite the call by the kind of its optimizer; None when done, else why not."""
    given = _given(call)
    if isinstance(given, str):
        return given
    opt = given["opt"]
    found = kind_of(context, opt.value if isinstance(opt, ast.keyword) else opt)
    if found.kind is None and found.refused:
        return Why("run-time", f"kind of optimizer unknown, {found.why}")
    if found.kind is None:
        return _at_run_time(context, call, qualified, opt=opt, loss_scale=given.get("loss_scale"))
    if found.kind == V1:
        new = V1_HOME + "enable_mixed_precision_graph_rewrite"
        spelled = context.spell(call.func, new)
        if spelled is None:
            return Why("limit", f"cannot write {short(new)} here")
        context.fix(
            CODE,
            call.func,
            f"{short(qualified)} -> tf.compat.v1.mixed_precision's ({_evidence(found)})",
            [context.edit(call.func, spelled.text)],
            consumes=context.loads_in(call.func),
            spellings=[spelled],
            manual=short(qualified),
        )
        return None
    assert found.kind == KERAS
    return _keras(
        context, call, qualified, opt=opt, loss_scale=given.get("loss_scale"), found=found
    )


def _keras(
    context: Context,
    call: ast.Call,
    qualified: str,
    *,
    opt: ast.expr | ast.keyword,
    loss_scale: ast.expr | ast.keyword | None,
    found: Kind,
    help: str = "",
) -> str | None:
    """TF 2.4-2.8's function for a Keras optimizer, written out (see the module's docstring)."""
    source = context.source
    translation, runtime = Translation(), False
    if loss_scale is not None:
        try:
            translation = translate(context, loss_scale)
        except Untranslatable as reason:
            value = loss_scale.value if isinstance(loss_scale, ast.keyword) else loss_scale
            converted = _runtime_scale.keywords(context, value)  # keras2 only
            if converted is None:
                unproven = _unproven(context, value)
                return Why(
                    "elsewhere" if unproven else reason.reason,
                    f"a Keras optimizer, but {unproven or reason}",
                )
            translation, runtime = Translation(keywords=converted), True
    fixed = ("dynamic", "False") in translation.keywords
    if fixed and context.target == "keras3":
        return Why("keras3-fixed", "a Keras optimizer, but Keras 3 has no fixed LossScaleOptimizer")
    statement = _kind_at_run_time.statement(context, call)
    if statement is None:
        return Why("limit", "a Keras optimizer, but the call is not a statement of its own line")
    new = table.new_home(_EXPERIMENTAL_LSO, context.target) or ""
    spelled = context.spell(call.func, new)
    options = context.spell(call.func, _SET_OPTIONS)
    if spelled is None or options is None:
        return Why("limit", f"a Keras optimizer, but {short(new)} cannot be written here")
    edits = [context.edit(call.func, spelled.text)]
    if isinstance(opt, ast.keyword):
        start = source.offset(opt.lineno, opt.col_offset)
        edits.append(Edit(start, start + len("opt"), "inner_optimizer"))
    if loss_scale is not None:
        inner = opt.value if isinstance(opt, ast.keyword) else opt  # its keyword renamed above
        edits += lso_argument_edits(context, call, inner, loss_scale, translation)
    if translation.followed is not None:
        edits.append(delete_statement(context, translation.followed))
    for node in (loss_scale, translation.followed):
        for child in ast.walk(node) if node is not None else ():
            context.claim(child)  # translated with the call (LSO001's reading)
    line_start = source.lines(statement)[0]
    indent = source.line(statement.lineno)[: statement.col_offset]
    text = f'{options.text}({{"auto_mixed_precision": True}}){source.newline}'
    edits.append(Edit(line_start, line_start, indent + text))
    context.fix(
        CODE,
        call.func,
        f"{short(qualified)} -> LossScaleOptimizer{'(...)' if translation.keywords else ''} + "
        f"auto_mixed_precision ({_evidence(found)})",
        edits,
        consumes=context.loads_in(call.func) | translation.consumes,
        spellings=[spelled, options],
        manual=short(qualified),
        help=_runtime_scale.HELP if runtime else help,
    )
    if context.target == "keras3" and context.wants(KERAS3_RULE, call):
        context.note(KERAS3_RULE, call, DYNAMIC_RULE_NOTE, help=table.KERAS3_RULE_HELP)
    return None


def _at_run_time(
    context: Context,
    call: ast.Call,
    qualified: str,
    *,
    opt: ast.expr | ast.keyword,
    loss_scale: ast.expr | ast.keyword | None,
) -> str | None:
    """TF 2.4-2.8's choice by kind, made where the code runs (codemods/rules/_kind_at_run_time.py);
    None when written, else why not."""
    why, keras = "kind known at run time only, and ", "if a Keras optimizer, "
    keywords: list[tuple[str, str]] = []
    runtime = False
    if loss_scale is not None:
        try:  # a LossScale object bound to a name stays: the TF1 branch takes it
            keywords = translate(context, loss_scale).keywords
        except Untranslatable as reason:
            value = loss_scale.value if isinstance(loss_scale, ast.keyword) else loss_scale
            read = _kind_at_run_time.object_keywords(context, value)  # its values, read then
            converted = read or _runtime_scale.keywords(context, value)  # keras2 only
            if converted is None:  # one fact line: 160 characters after "LSO008 "
                unproven = _unproven(context, value)
                why = unproven or str(reason)
                return Why(
                    "elsewhere" if unproven else reason.reason,
                    keras + one_line(why, 149 - len(short(qualified) + keras)),
                )
            keywords, runtime = converted, read is None
    if ("dynamic", "False") in keywords and context.target == "keras3":
        return Why("keras3-fixed", f"{keras}Keras 3 has no fixed LossScaleOptimizer")
    homes = {
        "func": V1_HOME + "enable_mixed_precision_graph_rewrite",
        "v1": _kind_at_run_time.V1_OPTIMIZER,
        "lso": table.new_home(_EXPERIMENTAL_LSO, context.target) or "",
        "options": _SET_OPTIONS,
    }
    spelled = {key: context.spell(call.func, new) for key, new in homes.items()}
    missing = [homes[key] for key, spelling in spelled.items() if spelling is None]
    if missing:
        return Why("limit", f"{why}{short(missing[0])} cannot be written here")
    written = {key: spelling for key, spelling in spelled.items() if spelling is not None}
    edits = _kind_at_run_time.dispatch(context, call, opt, keywords, written)
    if isinstance(edits, str):
        return Why("run-time", why + edits)
    context.fix(
        CODE,
        call.func,
        f"{short(qualified)} -> by kind at run time: tf.compat.v1's or LossScaleOptimizer + "
        "auto_mixed_precision",
        [context.edit(call.func, written["func"].text), *edits],
        consumes=context.loads_in(call.func),
        spellings=list(written.values()),
        manual=short(qualified),
        help=_runtime_scale.HELP if runtime else "",
    )
    if context.target == "keras3" and context.wants(KERAS3_RULE, call):
        context.note(KERAS3_RULE, call, DYNAMIC_RULE_NOTE, help=table.KERAS3_RULE_HELP)
    return None


def _unproven(context: Context, value: ast.expr) -> str | None:
    """Why a run-time loss scale is not converted, where a LossScale object may reach it
    (LSO001 names what sets it; here its line, to keep one short fact line)."""
    found = _runtime_scale.may_be_an_object(context, value)
    if context.target != "keras2" or found is None:
        return None
    return f"loss_scale may be a LossScale object (line {found.line})"


def _evidence(found: Kind) -> str:
    """Which kind, and the line that builds it."""
    line = getattr(found.evidence, "lineno", None)
    return f"{found.kind} optimizer" + (f", line {line}" if line else "")
