"""LSO017: reads of TF 2.4's `loss_scale`, `dynamic_counter` and `dynamic`, which Keras 3 lacks.

On keras3, where the receiver may hold a dynamic TF 2.4 LossScaleOptimizer made in the module
(codemods/meaning/instances.py follows it through names, returns, tuple unpacking, attributes,
containers and parameters), and only that one, or several that all are:
- `opt.loss_scale` (TF 2.4: a float32 tensor, the scale at the time of the read) ->
  `tf.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, tf.float32)`.
  Keras 3 creates `dynamic_scale` in build(), and it is a variable: read alone it would fail
  before the first step and follow later updates;
- `opt.dynamic_counter` -> `opt.step_counter` (Keras 3 counts and resets at the same steps);
- `opt.dynamic` -> `True` (every Keras 3 LossScaleOptimizer is dynamic).
A receiver with a call in it (evaluated three times by the rewrite) is reported. Elsewhere:
`.dynamic_counter` (only the loss scale optimizer has it) is rewritten the same way on any
receiver, and `.loss_scale` on one the module scales losses with (get_scaled_loss or
get_unscaled_gradients through the same binding); otherwise `.loss_scale` and `.dynamic` on
something named like an optimizer are reported, and
`.loss_scale` on anything the module cannot type, in a module that makes one (`.dynamic` on
anything else is too common a name to guess at: Keras layers have it). A fixed-scale optimizer
is reported: it has no Keras 3 class.
"""

from __future__ import annotations

import ast
import re

from codemods import table
from codemods.meaning.instances import Typed
from codemods.meaning.module import Context
from codemods.rules import _member_guards, keras2_surface, loss_scale_optimizer_call
from codemods.rules._tf24 import (
    bind,
    call_kind,
    constructions,
    instances,
    is_bool,
    tensorflow_name,
    tf_keras_code,
    value,
)

CODE = "LSO017"
ATTRIBUTES = frozenset({"loss_scale", "dynamic_counter", "dynamic"})
# Receivers bound to these keep their own API (the shim's has all three; Keras 3 code is left).
_NOT_TF24 = frozenset({table.SHIM_LSO, table.SHIM_EXPERIMENTAL_LSO, *table.KERAS3_ONLY_LSO})
_LSO_ONLY = frozenset({"get_scaled_loss", "get_unscaled_gradients"})
_OPTIMIZER_LIKE = re.compile(r"(^|_)opt(imi[sz]er)?($|_)|optimi[sz]er", re.IGNORECASE)


def on_module(context: Context) -> None:
    if context.target != "keras3" or tf_keras_code(context.names):
        return  # tf_keras's class keeps all three
    names = context.names
    # `opt.loss_scale()` is LSO010's. (Claims are not consulted: `x = opt.loss_scale` is claimed
    # as the right-hand side of an alias, which is ours to rewrite.)
    functions = {id(call.func) for call in names.calls}
    for node in names.attributes:
        if (
            node.attr not in ATTRIBUTES
            or not isinstance(node.ctx, ast.Load)
            or id(node) in functions
        ):
            continue
        if not context.wants(CODE, node):
            context.claim(node)
            continue
        _dispatch(context, node)
    # After LSO011 too: `hasattr(opt, "get_scaled_loss")` follows the rewrite under it.
    _member_guards.follow(context, lambda receiver: _made_here(context, receiver))


def _dispatch(context: Context, node: ast.Attribute) -> None:
    """By what the receiver may hold (codemods/meaning/instances.py): the loss scale optimizers made
    here that reach it (through names, returns, tuples, attributes, containers, parameters)."""
    typed = instances(context).typed(node.value)
    calls = [c for c in typed.calls if _class(context, c) not in _NOT_TF24]
    if typed.made and not calls:
        return  # the shim's or Keras 3's own class: its own API
    if len(calls) > 1 and _has_call(node.value):
        context.report(
            CODE, node, f"{_read(context, node)}: its receiver is computed", reason="limit"
        )
    elif len(calls) > 1:
        for call in calls:  # one rewrite must fit them all: each on its own, reported or not
            if _translation(context, call) != "dynamic":
                lines = ", ".join(str(c.lineno) for c in calls)
                context.report(
                    CODE,
                    node,
                    f"{_read(context, node)}: one of the optimizers at lines {lines}",
                    reason="run-time",
                )
                return
        _dynamic_read(context, node)
    elif calls and _has_call(node.value):
        context.report(
            CODE, node, f"{_read(context, node)}: its receiver is computed", reason="limit"
        )
    elif calls:
        _single(context, node, calls[0])
    elif typed.kinds != {"other"} or node.attr == "dynamic_counter":
        _untyped(context, node, typed)  # a parameter, `self.optimizer`, a factory's result


def _made_here(context: Context, receiver: ast.expr) -> bool:
    """`receiver` may hold a TF 2.4-2.15 (or experimental) loss scale optimizer made here."""
    calls = instances(context).typed(receiver).calls
    return any(
        _class(context, c) not in _NOT_TF24 and _translation(context, c) != "keras3" for c in calls
    )


def _read(context: Context, node: ast.Attribute) -> str:
    return f"{context.source.segment(node.value)}.{node.attr}"


def _has_call(receiver: ast.expr) -> bool:
    """A receiver that a rewrite reading it three times would evaluate three times."""
    return any(
        isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.NamedExpr)) for n in ast.walk(receiver)
    )


def _class(context: Context, call: ast.Call) -> str | None:
    """The class a constructor call (or its `X.from_config(...)`, codemods/meaning/rebuilt.py)
    makes an instance of."""
    qualified = context.qualified(call.func)
    return qualified.removesuffix(".from_config") if qualified else None


def _translation(context: Context, call: ast.Call) -> str:
    """ "dynamic" where `call` makes a dynamic optimizer the codemod can read; else why not
    ("config": built from a config it cannot read)."""
    if (context.qualified(call.func) or "").endswith(".from_config"):
        return "config"
    if context.qualified(call.func) in table.TF24_LSO:
        bound = bind(call)
        if call_kind(context, bound) == "keras3":
            return "keras3"
        dynamic = bound.arguments.get("dynamic")
        if bound.problem or (dynamic is not None and not is_bool(value(dynamic))):
            return "unknown"
        flag = value(dynamic) if dynamic is not None else None
        return "fixed" if isinstance(flag, ast.Constant) and not flag.value else "dynamic"
    try:
        _, loss_scale = loss_scale_optimizer_call.arguments(call)
        translation = loss_scale_optimizer_call.translate(context, loss_scale)
    except loss_scale_optimizer_call.Untranslatable:
        return "unknown"
    return "fixed" if ("dynamic", "False") in translation.keywords else "dynamic"


def _single(context: Context, node: ast.Attribute, call: ast.Call) -> None:
    """A read on the one optimizer made at `call` (TF 2.4's class, or the experimental class,
    which LSO001 turns into the new class in this same run: its reads are migrated now too, so
    that a second run changes nothing)."""
    kind = _translation(context, call)
    if kind == "keras3":
        return
    read = _read(context, node)
    if kind == "unknown":
        context.report(
            CODE,
            node,
            f"{read}: the optimizer at line {call.lineno} is not static",
            reason="run-time",
        )
    elif kind == "config":
        context.report(
            CODE,
            node,
            f"{read}: the optimizer at line {call.lineno} is built from a config the codemod "
            "cannot read",
            reason="run-time",
        )
    elif kind == "fixed":
        _report_fixed(context, node, read, call)
    else:
        _dynamic_read(context, node)


def _report_fixed(context: Context, node: ast.Attribute, read: str, call: ast.Call) -> None:
    context.report(
        CODE,
        node,
        f"{read}: the optimizer at line {call.lineno} has a fixed scale, which Keras 3 has "
        "only as loss_scale_factor",
        reason="keras3-fixed",
    )


def _dynamic_read(context: Context, node: ast.Attribute) -> None:
    """A read on a dynamic TF 2.4 LossScaleOptimizer, in Keras 3's words."""
    receiver = context.source.segment(node.value)
    read = f"{receiver}.{node.attr}"
    if node.attr == "dynamic":
        _rewrite(
            context, node, "True", f"{read} -> True: every Keras 3 LossScaleOptimizer is dynamic"
        )
    elif node.attr == "dynamic_counter":
        _counter(context, node)
    else:
        root = node.value
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        tf = tensorflow_name(context, root) if isinstance(root, ast.Name) else None
        if tf is None:
            context.report(
                CODE,
                node,
                f"{read}: no `import tensorflow` in scope to write it with",
                reason="limit",
            )
            return
        new = (
            f"{tf}.convert_to_tensor({receiver}.dynamic_scale if {receiver}.built else "
            f"{receiver}.initial_scale, {tf}.float32)"
        )
        _rewrite(
            context,
            node,
            new,
            f"{read} -> {receiver}.dynamic_scale (initial_scale until built) as a float32 tensor",
        )


def _untyped(context: Context, node: ast.Attribute, typed: Typed) -> None:
    if node.attr == "dynamic_counter":
        _counter(context, node)
    elif not _has_call(node.value) and _known(context, node):
        # A loss scale optimizer for LSO011 (get_scaled_loss) or LSO019 (compile()'s wrapper
        # under mixed_float16) is one for its state too.
        if node.attr == "dynamic":
            _is_dynamic(context, node)
        else:
            _dynamic_read(context, node)
        _note(context, node)
    elif _OPTIMIZER_LIKE.search(_last_name(node.value)) or (
        # In a module that makes one, what the codemod cannot type may be it. `.dynamic` alone
        # is too common a name (Keras layers have it), but not on an optimizer.
        node.attr != "dynamic" and instances(context).untyped_may_be_one(node.value, typed)
    ):
        context.report(
            CODE,
            node,
            f"{_read(context, node)} (if this is a LossScaleOptimizer)",
            reason="run-time",
        )


def _known(context: Context, node: ast.Attribute) -> bool:
    """The receiver is a loss scale optimizer by what the module does with it elsewhere: scales
    losses with it through the same binding (LSO011), or compiles it under mixed_float16
    (LSO019's `model.optimizer`, Keras 3's wrapper)."""
    return (
        _scales_losses(context, node) or keras2_surface.receiver_kind(context, node) == "compiled"
    )


def _is_dynamic(context: Context, node: ast.Attribute) -> None:
    """`opt.dynamic` on a receiver known to be a loss scale optimizer but not where it was made:
    Keras 3's is dynamic, and a fixed one became the inner optimizer's loss_scale_factor (LSO001,
    LSO015), so whether it is Keras 3's class is what TF 2.4's `dynamic` said."""
    root = node.value
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    tf = tensorflow_name(context, root) if isinstance(root, ast.Name) else None
    read = _read(context, node)
    if tf is None:
        context.report(
            CODE, node, f"{read}: no `import tensorflow` in scope to write it with", reason="limit"
        )
        return
    receiver = context.source.segment(node.value)
    _rewrite(
        context,
        node,
        f"isinstance({receiver}, {tf}.keras.mixed_precision.LossScaleOptimizer)",
        f"{read} -> isinstance(..., LossScaleOptimizer): Keras 3's is dynamic, a fixed scale "
        "is not one",
    )


def _scales_losses(context: Context, node: ast.Attribute) -> bool:
    """The module calls `get_scaled_loss` or `get_unscaled_gradients`, which only a loss scale
    optimizer has, on the same receiver through the same binding (`optimizer = model.optimizer`
    scaled in a closure, read for logging): then `.loss_scale` is that optimizer's scale. Were it
    a fixed one, Keras 3's has no `dynamic_scale` and the read fails, as it must."""
    root = node.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    shape, bound = ast.dump(node.value), _bindings(context, root)
    for call in context.names.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in _LSO_ONLY):
            continue
        if ast.dump(func.value) != shape:
            continue
        other = func.value
        while isinstance(other, ast.Attribute):
            other = other.value
        if isinstance(other, ast.Name) and bound and _bindings(context, other) == bound:
            return True
    return False


def _bindings(context: Context, name: ast.Name) -> tuple[int, ...]:
    """Which bindings a name load may read (empty where unresolved)."""
    names = context.names
    scope = names.scope_of_load.get(id(name))
    found = names.lookup(name.id, scope) if scope is not None else None
    return tuple(id(b) for b in found or ())


def _counter(context: Context, node: ast.Attribute) -> None:
    receiver = context.source.segment(node.value)
    _rewrite(
        context,
        node,
        f"{receiver}.step_counter",
        f"{receiver}.dynamic_counter -> {receiver}.step_counter (int32)",
    )
    _note(context, node)


def _note(context: Context, node: ast.Attribute) -> None:
    """Keras 3's dynamic rule, once a line, where no LSO022 note at a constructor says it."""
    if constructions(context) or any(
        f.code == CODE and f.note and f.line == node.lineno for f in context.findings
    ):
        return
    context.note(CODE, node, table.KERAS3_RULE_HERE, help=table.KERAS3_RULE_HELP)


def _rewrite(context: Context, node: ast.Attribute, new: str, message: str) -> None:
    context.fix(
        CODE,
        node,
        message,
        [context.edit(node, new)],
        consumes=set(),
        help=table.KERAS3_BEHAVIOUR,
    )


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""
