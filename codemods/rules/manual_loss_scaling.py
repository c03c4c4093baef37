"""LSO011: get_scaled_loss / get_unscaled_gradients, which Keras 3 does not have.

Keras 3's `scale_loss(loss)` multiplies like `get_scaled_loss`, but its `apply_gradients` takes
the still-scaled gradients and divides them itself. So `get_scaled_loss` -> `scale_loss` is right
only together with dropping `get_unscaled_gradients`, and that only where the unscaled gradients
went straight into the same optimizer's `apply_gradients`: anything in between (clipping,
logging, an all-reduce, accumulation) would see scaled gradients. Per function (lambdas and
comprehensions count as their enclosing function's) and receiver as written (`self.optimizer`,
`opt`; it cannot be typed statically, but the method names are unique to the loss scale
optimizer), the calls are rewritten together, as one Fix, or written out (_explicit_unscaling.py),
or, where the gradients leave the function, written out optimizer-wide (_optimizer_wide.py),
or all reported with what is in the way.
keras2 and shim keep both methods (every target does in code on tf_keras's class, which keeps
Keras 2's); on shim a call on `self.optimizer` / `model.optimizer`, which may be compile()'s own
wrapping, is reported when the file constructs no loss scale optimizer.
On every target, a get_unscaled_gradients of gradients of a loss never scaled (the old code's own
bug: it trains at gradients / scale) says so, with both choices (`_never_scaled.py`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from codemods import table
from codemods.meaning.module import Context, delete_statement
from codemods.meaning.names import Scope
from codemods.rules import (
    _minimize,
    _never_scaled,
    _optimizer_wide,
    _shim_methods,
)
from codemods.rules._explicit_unscaling import keyword_help
from codemods.rules._explicit_unscaling import migrate as write_out
from codemods.rules._tf24 import (
    constructions,
    parent,
    tf_keras_code,
)
from codemods.source import Edit
from codemods.table import Why, reason_of

CODE = "LSO011"
SCALE, UNSCALE, MINIMIZE = "get_scaled_loss", "get_unscaled_gradients", "minimize"
METHODS = frozenset({SCALE, UNSCALE})
_LOOKED_AT = METHODS | {MINIMIZE}
_OWNERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


class Blocked(Exception):
    """The calls cannot be rewritten; the message says what is in the way."""


def on_module(context: Context) -> None:
    calls = [
        call
        for call in context.names.calls
        if isinstance(call.func, ast.Attribute) and call.func.attr in _LOOKED_AT
    ]
    if not calls:
        return
    if context.target != "keras3":  # keras3: _migrate reports them (the calls must change)
        for call in calls:
            if (
                _method(call) == UNSCALE
                and context.wants(CODE, call)
                and not _scaled_here(context, call, [c for c in calls if _method(c) == SCALE])
            ):
                _never_scaled.say(context, call, _receiver(context, call))
    if context.target == "keras2" or tf_keras_code(context.names):
        return  # tf_keras's class keeps both methods and Keras 2's apply_gradients
    if context.target == "shim":
        _shim_methods.on_shim(context, calls)
        return
    for call in [c for c in calls if _method(c) == MINIMIZE]:
        calls.remove(call)
        _minimize.report(context, call)
    groups: dict[tuple[int, str], list[ast.Call]] = {}
    for call in calls:
        assert isinstance(call.func, ast.Attribute)
        key = (id(_owner(context, call)), ast.dump(call.func.value))
        groups.setdefault(key, []).append(call)
    blocked: dict[tuple[int, str], list[tuple[list[ast.Call], str]]] = {}
    for group in groups.values():  # per function first, then what is left per optimizer
        reason = _migrate(context, group)
        if reason:
            key = (_optimizer_wide.home_of(context, group[0]), ast.dump(group[0].func.value))  # type: ignore[attr-defined]
            blocked.setdefault(key, []).append((group, reason))
    for left in blocked.values():
        calls = [call for group, _ in left for call in group]
        suppressed = any(not context.wants(CODE, call) for call in calls)
        wide, told = ("", False) if suppressed else _optimizer_wide.migrate(context, calls)
        if wide and told and not _optimizer_wide.escaping(context, calls):
            wide = ""  # every apply_gradients of the module scaled back
        for group, reason in left if suppressed or wide else ():
            receiver = _receiver(context, group[0])
            for call in [c for c in group if context.wants(CODE, c)]:
                why = wide if told else reason
                context.report(
                    CODE,
                    call,
                    f"{receiver}.{_method(call)}() not rewritten: {why}",
                    reason=reason_of(why, "limit"),
                    help=keyword_help(why),
                )


def _migrate(context: Context, group: list[ast.Call]) -> str:
    """Rewrite one function's calls on one receiver: '' if done (or said), else why not."""
    receiver = _receiver(context, group[0])
    suppressed = [call for call in group if not context.wants(CODE, call)]
    try:
        if suppressed:
            raise Blocked(f"the call at line {suppressed[0].lineno} is suppressed")
        scales = [call for call in group if _method(call) == SCALE]
        unscales = [call for call in group if _method(call) == UNSCALE]
        if not unscales:
            raise Blocked(Why("elsewhere", f"no {receiver}.{UNSCALE}() in the same function"))
        if len(unscales) > 1:
            lines = ", ".join(str(c.lineno) for c in unscales)
            raise Blocked(f"{receiver}.{UNSCALE}() is called more than once here (lines {lines})")
        if not scales:
            if _never_scaled.say(context, unscales[0], receiver):
                return ""
            raise Blocked(Why("elsewhere", f"no {receiver}.{SCALE}() in the same function"))
        for call in group:
            if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
                raise Blocked(f"the call at line {call.lineno} does not pass one argument")
        unscale = unscales[0]
        edits, apply = _drop_unscaling(context, unscale)
    except Blocked as blocked:
        # Where code between reads the unscaled gradients, written out instead ('' if it was).
        if suppressed or write_out(context, group, _owner(context, group[0])):
            why = blocked.args[0]
            return why if isinstance(why, str) else str(blocked)
        return ""
    context.applies_done.add(id(apply))
    source = context.source
    for call in scales:
        assert isinstance(call.func, ast.Attribute)
        end = source.offset(*_end(call.func))
        edits.append(Edit(end - len(SCALE), end, "scale_loss"))
    context.fix(
        CODE,
        scales[0],
        f"{receiver}.{SCALE}() -> scale_loss(), {UNSCALE}() at line {unscale.lineno} dropped "
        f"(apply_gradients at line {apply.lineno} unscales)",
        edits,
        consumes=set(),
        help=table.KERAS3_BEHAVIOUR,
    )
    if not constructions(context):  # no LSO022 note at a constructor here
        context.note(CODE, scales[0], table.KERAS3_RULE_HERE, help=table.KERAS3_RULE_HELP)
    return ""


def _scaled_here(context: Context, unscale: ast.Call, scales: list[ast.Call]) -> bool:
    """Whether the function of `unscale` scales a loss through the same receiver."""
    owner, receiver = _owner(context, unscale), _receiver(context, unscale)
    return any(_owner(context, c) is owner and _receiver(context, c) == receiver for c in scales)


def _drop_unscaling(context: Context, call: ast.Call) -> tuple[list[Edit], ast.Call]:
    """Edits that drop `opt.get_unscaled_gradients(g)`, and the line of the apply_gradients."""
    grads = call.args[0]
    assert isinstance(call.func, ast.Attribute)
    receiver = ast.dump(call.func.value)
    above = parent(context, call)
    apply = _into_apply(context, call, receiver)
    if apply is not None:  # apply_gradients(zip(opt.get_unscaled_gradients(g), v))
        return [context.edit(call, context.source.segment(grads))], apply
    if not _assigns_one_name(above, call):
        raise Blocked(f"the unscaled gradients go into `{_text(context, above)}`")
    assert isinstance(above, ast.Assign) and isinstance(above.targets[0], ast.Name)
    name = above.targets[0].id
    use = _single_later_read(context, above, name, skip=call)
    apply = _into_apply(context, use, receiver) or _through_pairs(context, use, receiver)
    if apply is None:
        raise Blocked(
            f"`{name}` goes into `{_text(context, parent(context, use))}` at line {use.lineno}, "
            "not to apply_gradients"
        )
    # `grads = opt.get_unscaled_gradients(grads)`: the statement goes.
    if isinstance(grads, ast.Name) and grads.id == name:
        return [delete_statement(context, above)], apply
    return [context.edit(call, context.source.segment(grads))], apply


def _through_pairs(context: Context, use: ast.Name, receiver: str) -> ast.Call | None:
    """`pairs = [list|tuple](zip(use, v))` then `<receiver>.apply_gradients(pairs)`."""
    holder: ast.AST | None = parent(context, use)
    if not (isinstance(holder, ast.Call) and _is_zip(holder, use)):
        return None
    flows = parent(context, holder)
    if isinstance(flows, ast.Call) and _is_wrapper(flows, holder):
        holder, flows = flows, parent(context, flows)
    if not _assigns_one_name(flows, holder):
        return None
    assert isinstance(flows, ast.Assign) and isinstance(flows.targets[0], ast.Name)
    pairs = _single_later_read(context, flows, flows.targets[0].id, skip=None)
    return _apply_of(context, pairs, receiver)


@dataclass
class _Reads:
    later: list[ast.Name]  # reads after the statement (or anywhere in a loop around it)
    nested: list[ast.Name]  # reads from a nested function, whenever they run


def _single_later_read(
    context: Context, statement: ast.Assign, name: str, skip: ast.Call | None
) -> ast.Name:
    """The one read of `name` after `statement` assigned it; anything else is in the way."""
    reads = _reads(context, statement, name, skip)
    if not reads.later:
        raise Blocked(f"`{name}` is not read after line {statement.lineno}")
    if reads.nested or len(reads.later) > 1:
        every = sorted(reads.nested + reads.later, key=lambda n: (n.lineno, n.col_offset))
        # Point at what is in the way, not at the apply_gradients the gradients reach last.
        other = next((n for n in every if not _is_apply_argument(context, n)), every[0])
        raise Blocked(f"`{name}` is also read at line {other.lineno} (`{_text(context, other)}`)")
    return reads.later[0]


def _is_apply_argument(context: Context, node: ast.expr) -> bool:
    holder = parent(context, node)
    while isinstance(holder, ast.Call) and not (
        isinstance(holder.func, ast.Attribute) and holder.func.attr == "apply_gradients"
    ):
        if not (_is_zip(holder, node) or _is_wrapper(holder, node)):
            return False
        node, holder = holder, parent(context, holder)
    return isinstance(holder, ast.Call)


def _reads(context: Context, statement: ast.Assign, name: str, skip: ast.Call | None) -> _Reads:
    names = context.names
    scope = _scope_of_statement(context, statement, name)
    bindings = scope.bindings.get(name, [])
    loop = _enclosing_loop(context, statement)
    skipped = {id(n) for n in ast.walk(skip)} if skip is not None else set()
    end = _end(statement)
    reads = _Reads([], [])
    for load in names.loads:
        if load.id != name or id(load) in skipped:
            continue
        load_scope = names.scope_of_load[id(load)]
        if names.lookup(name, load_scope) is not bindings:
            continue
        position = (load.lineno, load.col_offset)
        if _in_nested_function(load_scope, scope):
            reads.nested.append(load)
        elif position > end or (loop is not None and _inside(load, loop)):
            reads.later.append(load)
    reads.later.sort(key=lambda n: (n.lineno, n.col_offset))
    return reads


def _scope_of_statement(context: Context, statement: ast.Assign, name: str) -> Scope:
    """The scope the assignment binds `name` in: that of its own function, or it is blocked."""
    owner = _owner(context, statement)
    for scope in context.names.scopes:
        if scope.node is owner and any(b.node is statement for b in scope.bindings.get(name, ())):
            return scope
    raise Blocked(f"`{name}` is global or nonlocal here")


def _into_apply(context: Context, node: ast.expr, receiver: str) -> ast.Call | None:
    """The `<receiver>.apply_gradients(zip(node, ...))` call `node` goes straight into."""
    holder = parent(context, node)
    if not _is_zip(holder, node):
        return None
    assert isinstance(holder, ast.Call)
    above = parent(context, holder)
    if isinstance(above, ast.Call) and _is_wrapper(above, holder):
        holder, above = above, parent(context, above)
    return _apply_of(context, holder, receiver, above)


def _apply_of(
    context: Context, node: ast.expr, receiver: str, above: ast.AST | None = None
) -> ast.Call | None:
    above = parent(context, node) if above is None else above
    if isinstance(above, ast.keyword) and above.arg == "grads_and_vars":
        above = parent(context, above)
    if not (
        isinstance(above, ast.Call)
        and isinstance(above.func, ast.Attribute)
        and above.func.attr == "apply_gradients"
        and ast.dump(above.func.value) == receiver
    ):
        return None
    extra = [k.arg for k in above.keywords if k.arg != "grads_and_vars"]
    if extra or len(above.args) + len(above.keywords) != 1:
        raise Blocked(
            f"the apply_gradients at line {above.lineno} passes "
            f"{', '.join(str(k) for k in extra) or 'a second argument'}, which Keras 3's does not "
            "take"
        )
    return above


def _is_zip(node: ast.AST | None, first: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "zip"
        and node.args[:1] == [first]
    )


def _is_wrapper(node: ast.Call, inner: ast.AST) -> bool:
    """`list(zip(...))` / `tuple(zip(...))`."""
    return (
        isinstance(node.func, ast.Name)
        and node.func.id in ("list", "tuple")
        and node.args == [inner]
        and not node.keywords
    )


def _assigns_one_name(statement: ast.AST | None, value: ast.AST) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and statement.value is value
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    )


def _owner(context: Context, node: ast.AST) -> ast.AST:
    current: ast.AST | None = node
    while current is not None and not isinstance(current, _OWNERS):
        current = parent(context, current)
    return current if current is not None else context.tree


def _enclosing_loop(context: Context, node: ast.AST) -> ast.AST | None:
    current = parent(context, node)
    while current is not None and not isinstance(current, _OWNERS):
        if isinstance(current, _LOOPS):
            return current
        current = parent(context, current)
    return None


def _inside(node: ast.expr, outer: ast.AST) -> bool:
    start = (getattr(outer, "lineno", 0), getattr(outer, "col_offset", 0))
    end = (getattr(outer, "end_lineno", 0), getattr(outer, "end_col_offset", 0))
    return start <= (node.lineno, node.col_offset) < end


def _in_nested_function(scope: Scope, owner: Scope) -> bool:
    current: Scope | None = scope
    while current is not None and current is not owner:
        if isinstance(current.node, _NESTED):
            return True
        current = current.parent
    return False


def _end(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0


def _method(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def _receiver(context: Context, call: ast.Call) -> str:
    assert isinstance(call.func, ast.Attribute)
    return context.source.segment(call.func.value)


def _text(context: Context, node: ast.AST | None) -> str:
    if node is None or not hasattr(node, "lineno"):
        return "?"
    line = context.source.line(node.lineno).strip()
    return line if len(line) <= 30 else line[:27] + "..."
