"""LSO019: Keras 2's optimizer forms used on a loss scale optimizer, which Keras 3 lacks.

Horovod's `hvd.broadcast_variables(opt.variables(), root_rank=0)` is the common one: Keras 2's
`variables` is a method, Keras 3's a list, so the call fails on Keras 3. The receiver must be
known to be a loss scale optimizer (these names are common on other objects):
- a name last bound (same scope) to a LossScaleOptimizer call, of any generation;
- a receiver, as written, on which the file calls get_scaled_loss/get_unscaled_gradients, or an
  attribute the file assigns a loss scale optimizer (`self._optimizer = opt`);
- in a file that says `mixed_float16` or `LossScaleOptimizer`, `x.optimizer` (`model.optimizer`,
  `self.model.optimizer`) or a name last bound to one: compile() wraps the optimizer there.
keras3: `variables()` -> `variables`, `lr` -> `learning_rate`, `_optimizer` -> `inner_optimizer`;
the forms Keras 3 has no spelling for are reported with their fix (table.SURFACE_REFUSED), but
`opt._decayed_lr(dtype)` -> `tf.cast(opt.learning_rate, dtype)` on keras3 (_decayed_lr.py).
shim: compat_lso's class keeps the renamed forms and `get_gradients` (TF 2.4-2.10's meaning; on
the inner optimizer, `opt._optimizer.get_gradients`, it is reported); the ones it refuses on Keras
3 are reported.
`tf.keras.backend.set_value(opt.lr, v)` (or `K.set_value`, or on `opt.learning_rate`): Keras 3's
legacy set_value reads `x.dtype.name`, and Keras 3's variable has a str dtype, so it raises.
keras3: -> `opt.learning_rate.assign(v)`; shim: compat_lso's `lr` is the backing tf.Variable, so
that form is kept, and `set_value(opt.learning_rate, v)` is reported with that fix.
shim: TF 2.4's state reads (`loss_scale`, `dynamic`, `dynamic_counter`; `loss_scale()` is LSO010's)
on compile()'s wrapper in a file that makes no loss scale optimizer are reported: on Keras 3 that
wrapper is Keras 3's own class, which has none of them, unless compat_lso.install() runs.
"""

from __future__ import annotations

import ast
from typing import Literal, TypeAlias

from codemods import table
from codemods.meaning.module import Context
from codemods.rules import _decayed_lr, compile_loss_scale_optimizer
from codemods.rules._tf24 import _cached, instances, parent
from codemods.source import Edit
from codemods.table import Reason

CODE = "LSO019"
# Where compile() may have wrapped the optimizer in Keras 3's own class (under mixed_float16).
_INSTALL = (
    "call compat_lso.install() before compile() (python -m compat_lso run does), or pass "
    "compat_lso.LossScaleOptimizer(...) to compile()"
)
_CONSTRUCTORS = frozenset(
    {
        *table.TF24_LSO,
        *table.OLD_LSO,
        *table.KERAS3_ONLY_LSO,
        table.SHIM_LSO,
        table.SHIM_EXPERIMENTAL_LSO,
    }
)
_NAMES = frozenset(
    {
        "variables",
        "iterations",
        *table.SURFACE_RENAMED,
        *table.SURFACE_REFUSED,
        *table.SURFACE_CHANGED,
    }
)
_INNER = frozenset({"_optimizer", "inner_optimizer"})
_STATE = frozenset({"loss_scale", "dynamic", "dynamic_counter"})
_SET_VALUE = frozenset(
    f"{keras}.backend.set_value" for keras in ("tensorflow.keras", "keras", "tf_keras")
)
# "known": a loss scale optimizer the file makes or scales with; "compiled": `model.optimizer`
# in a mixed-precision file, the loss scale optimizer compile() adds.
Kind: TypeAlias = Literal["known", "compiled"]
_LOOKED_AT = _NAMES | _STATE | {"learning_rate"}  # the attributes on_module looks at


def on_module(context: Context) -> None:
    if context.target == "keras2":
        return
    # Claims are not consulted: `x = opt._optimizer` is claimed as the right-hand side of an
    # alias, which is ours to rewrite. A form reported on `opt._optimizer` covers that read.
    covered: set[int] = set()
    functions: set[int] | None = None  # the called attributes, once one of _STATE is read
    for node in context.names.attributes:
        if node.attr not in _LOOKED_AT or id(node) in covered:
            continue
        if node.attr in _STATE and context.target == "shim":
            if functions is None:
                functions = {id(call.func) for call in context.names.calls}
            if id(node) not in functions:
                _state_on_compiled(context, node)
                continue
        if node.attr not in _NAMES and not (
            node.attr == "learning_rate" and _set_value_of(context, node)
        ):
            continue
        kind = receiver_kind(context, node)
        if kind is None or not context.wants(CODE, node):
            continue
        _form(context, node, kind)
        covered.update(id(n) for n in ast.walk(node.value))


def receiver_kind(context: Context, node: ast.Attribute) -> Kind | None:
    """How `node`'s receiver is known to be a loss scale optimizer, or None where it is not. For
    the refused forms, the receiver may be its inner optimizer (`opt._optimizer._decayed_lr()`)."""
    receiver = node.value
    known = _known_receivers(context)
    if context.source.segment(receiver) in known:
        return "known"  # `self._optimizer.get_gradients`: `self._optimizer` is one
    if (
        node.attr in table.SURFACE_REFUSED
        and isinstance(receiver, ast.Attribute)
        and receiver.attr in _INNER
    ):
        receiver = receiver.value
    if context.source.segment(receiver) in known:
        return "known"
    if isinstance(receiver, ast.Name) and _is_loss_scale_optimizer_value(context, receiver):
        return "known"
    if _made_here(context, receiver):
        return "known"  # what LSO017 reads TF 2.4's state on: every member alike
    if isinstance(receiver, ast.Name):
        receiver = _last_binding(context, receiver)  # type: ignore[assignment]
    if (
        isinstance(receiver, ast.Attribute)
        and receiver.attr == "optimizer"
        and _compiled_with_loss_scaling(context)
    ):
        return "compiled"
    return None


@_cached
def _known_receivers(context: Context) -> frozenset[str]:
    """Receivers as written (`opt`, `self._optimizer`) that are loss scale optimizers anywhere in
    the file: TF 2.4's get_scaled_loss/get_unscaled_gradients are called on them, or an attribute
    is assigned one. A false match is another optimizer, for which the rewrites hold too."""
    source = context.source
    known = set()
    for call in context.names.calls:
        if isinstance(call.func, ast.Attribute) and call.func.attr in table.TF24_MARKERS:
            known.add(source.segment(call.func.value))
    for node in context.names.assigns:
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and _is_loss_scale_optimizer_value(context, node.value)
        ):
            known.add(source.segment(node.targets[0]))
    return frozenset(known)


def _made_here(context: Context, receiver: ast.expr) -> bool:
    """`receiver` may hold a loss scale optimizer made in the module, followed through
    names, returns, attributes and parameters (codemods/meaning/instances.py), as LSO017 reads
    their state."""
    if not _constructs_here(context):
        return False  # what it follows ends in calls of this module: none makes one
    typed = instances(context).typed(receiver)
    return any(context.qualified(call.func) in _CONSTRUCTORS for call in typed.calls)


def _is_loss_scale_optimizer_value(context: Context, value: ast.expr) -> bool:
    if isinstance(value, ast.Name):
        value = _last_binding(context, value)  # type: ignore[assignment]
    return isinstance(value, ast.Call) and (context.qualified(value.func) in _CONSTRUCTORS)


def constructs_one(context: Context) -> bool:
    """Whether the file makes a loss scale optimizer: `model.optimizer` is most likely that one,
    compat_lso's after a --target shim run (LSO023 makes compile() get one where it can)."""
    return compile_loss_scale_optimizer.wraps(context) or _constructs_here(context)


@_cached
def _constructs_here(context: Context) -> bool:
    """Whether a call in the module is a loss scale optimizer's constructor."""
    return any(context.names.calls_to(_CONSTRUCTORS))


def _compiled_with_loss_scaling(context: Context) -> bool:
    text = context.source.text
    return "mixed_float16" in text or "LossScaleOptimizer" in text


def _last_binding(context: Context, name: ast.Name) -> ast.expr | None:
    """What `name` was last bound to, in the same scope, before this read."""
    names = context.names
    scope = names.scope_of_load.get(id(name))
    bindings = names.lookup(name.id, scope) if scope else None
    position = (name.lineno, name.col_offset)
    before = [
        b
        for b in bindings or ()
        if b.statement is not None and (b.statement.lineno, b.statement.col_offset) < position
    ]
    if not before:
        return None
    last = max(before, key=lambda b: (b.statement.lineno, b.statement.col_offset))  # type: ignore[union-attr]
    return last.value if last.value is not None else last.alias_of


def _form(context: Context, node: ast.Attribute, kind: Kind) -> None:
    source = context.source
    written = f"{source.segment(node.value)}.{node.attr}"
    above = parent(context, node)
    stored = not isinstance(node.ctx, ast.Load)
    setter = _set_value_of(context, node)
    if setter is not None and (context.target == "keras3" or node.attr == "learning_rate"):
        _set_value(context, node, setter)
        return
    if node.attr == "iterations":
        if stored:
            _refuse(
                context,
                node,
                f"{written} = ...: Keras 3 optimizers own their step counter",
                table.SURFACE_ITERATIONS,
                "no-equivalent",
            )
        return
    if node.attr in table.SURFACE_CHANGED:
        why, fix = table.SURFACE_CHANGED[node.attr]
        _refuse(context, node, f"{written}: {why}", fix, "no-equivalent")
        return
    if (
        node.attr == _decayed_lr.METHOD
        and context.target == "keras3"
        and _decayed_lr.rewrite(
            context, node, CODE, inner=source.segment(node.value) not in _known_receivers(context)
        )
    ):
        return  # -> tf.cast(opt.learning_rate, dtype) (codemods/rules/_decayed_lr.py)
    if node.attr in table.SURFACE_REFUSED and not _kept_by_shim(context, node):
        _refuse(
            context,
            node,
            f"{written}: Keras 3's optimizers have no `{node.attr}`",
            table.SURFACE_REFUSED[node.attr],
            "no-equivalent",
        )
        return
    if node.attr == "variables" and (
        not isinstance(above, ast.Call) or above.func is not node or above.args or above.keywords
    ):
        return  # `opt.variables` is Keras 3's own list
    if context.target != "keras3":
        # compat_lso's class keeps `variables()`, `lr`, `_optimizer` and `get_gradients()`.
        # Keras 3's own class, which compile() adds under mixed_float16 unless
        # compat_lso.install() ran, does not.
        if kind == "compiled" and not constructs_one(context):
            _refuse(
                context,
                node,
                f"{written} kept, but compile() may make {source.segment(node.value)} Keras 3's "
                "LossScaleOptimizer, which lacks it",
                _INSTALL,
                "run-time",
            )
        return
    end = source.span(node)[1]
    if node.attr == "variables":
        assert isinstance(above, ast.Call)
        _rewrite(
            context,
            node,
            f"{written}() -> {written}: a list, not a method, on Keras 3",
            Edit(end, source.span(above)[1], ""),
            help=(
                "it also holds the loss scale's state; Keras 2's list is "
                f"{written.removesuffix('.variables')}.inner_optimizer.variables, less its "
                "learning rate"
            ),
        )
        return
    new = table.SURFACE_RENAMED[node.attr]
    _rewrite(
        context,
        node,
        f"{written} -> {source.segment(node.value)}.{new}, Keras 3's name for it",
        Edit(end - len(node.attr), end, new),
    )


def _kept_by_shim(context: Context, node: ast.Attribute) -> bool:
    """Whether compat_lso's class has `node`'s form (`opt.get_gradients`) on the shim target: on
    the loss scale optimizer itself, not on its inner optimizer (`opt._optimizer.get_gradients`),
    a Keras 3 optimizer there."""
    if context.target != "shim" or node.attr not in table.SURFACE_KEPT_BY_SHIM:
        return False
    receiver = node.value
    return not (
        isinstance(receiver, ast.Attribute)
        and receiver.attr in _INNER
        and context.source.segment(receiver) not in _known_receivers(context)
    )


def _state_on_compiled(context: Context, node: ast.Attribute) -> None:
    if (
        not isinstance(node.ctx, ast.Load)
        or receiver_kind(context, node) != "compiled"
        or constructs_one(context)
        or not context.wants(CODE, node)
    ):
        return
    receiver = context.source.segment(node.value)
    _refuse(
        context,
        node,
        f"{receiver}.{node.attr}: compile() may make {receiver} Keras 3's LossScaleOptimizer, "
        "which lacks it",
        _INSTALL,
        "run-time",
    )


def _set_value_of(context: Context, node: ast.Attribute) -> ast.Call | None:
    """The `K.set_value(node, v)` call that `node` (`opt.lr`, `opt.learning_rate`) is set by."""
    if node.attr not in ("lr", "learning_rate"):
        return None
    call = parent(context, node)
    if (
        isinstance(call, ast.Call)
        and len(call.args) == 2
        and not call.keywords
        and call.args[0] is node
        and context.qualified(call.func) in _SET_VALUE
    ):
        return call
    return None


def _set_value(context: Context, node: ast.Attribute, call: ast.Call) -> None:
    source = context.source
    rate = f"{source.segment(node.value)}.learning_rate"
    written = f"{source.segment(call.func)}({source.segment(node)}, v)"
    if context.target != "keras3":
        _refuse(
            context,
            node,
            f"{written}: Keras 3's legacy set_value fails on a Keras 3 variable",
            f"write {rate}.assign(v)",
            "no-equivalent",
        )
        return
    context.fix(
        CODE,
        call,
        f"{written} -> {rate}.assign(v)",
        [Edit(source.span(call)[0], source.span(call.args[1])[0], f"{rate}.assign(")],
        consumes=set(),
    )


def _refuse(context: Context, node: ast.Attribute, message: str, help: str, reason: Reason) -> None:
    context.claim(node)
    context.manual(node, CODE, message, reason=reason, help=help)


def _rewrite(
    context: Context, node: ast.Attribute, message: str, edit: Edit, *, help: str = ""
) -> None:
    context.fix(CODE, node, message, [edit], consumes=set(), help=help)
