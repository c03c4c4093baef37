"""LSO025: the removed experimental module held as a value, or reached through a name bound more
than one way.

shim: `compat_lso.experimental` holds TF 2.3's whole experimental surface (LossScaleOptimizer,
Policy, set_policy, global_policy, the LossScale classes, the graph rewrite), with the old names
and signatures. So the module itself, where its value goes somewhere the codemod cannot follow to
every use (stored in an attribute, returned, passed on, bound to a name bound more than one way),
becomes `compat_lso.experimental`, and a removed class or function bound to a name bound more
than one way becomes its `compat_lso.experimental` namesake: every use, in this module or not,
then reads what it read on TF 2.3. Only where every member this module reads through it is one
`compat_lso.experimental` has (the flow analysis, codemods/meaning/values.py), and not in a branch
for TF < 2.4 (LSO104: delete it). `compat_lso.install()` is added for the module and its policy
functions, as `python -m compat_lso run` does (compile() applies an experimental Policy's loss
scale after it).

Every target: `mp.experimental.set_policy` / `mp.experimental.global_policy` where `mp` is bound
more than one way and every binding is a Keras mixed_precision module (`try: from tf_keras import
mixed_precision` / `except ImportError: from tensorflow.keras import mixed_precision`): LSO004's
and LSO005's renames, `mp.set_global_policy` / `mp.global_policy`, which each of those modules has
with the same meaning, so the rewrite holds whichever binding runs.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context, Spelling
from codemods.meaning.names import Binding
from codemods.meaning.values import Flow
from codemods.meaning.version_gates import Gates
from codemods.rules import keras3_loss_scale_rule
from codemods.rules._rename import arrow, short

CODE = "LSO025"
# The members renamed on every target (LSO004, LSO005), arguments unchanged.
_RENAMED = {"set_policy": "set_global_policy", "global_policy": "global_policy"}
# shim: what compile() reads only once compat_lso.install() has run (an experimental Policy's loss
# scale): the module itself, and the policy functions.
_INSTALLS = {"experimental", "Policy", "set_policy"}


def on_module(context: Context) -> None:
    if CODE not in context.enabled:
        return  # each rewrite asks context.wants at its own line
    _through_several_modules(context)
    gates = Gates(context.tree)
    if context.target == "shim":
        _shim_values(context, gates)
    else:
        for name, bindings in _class_aliases_two_ways(context):
            _follow_class_alias(context, gates, name, bindings)


# -- every target: mp.experimental.set_policy, `mp` bound to several Keras modules -----------------
def _through_several_modules(context: Context) -> None:
    names = context.names
    for node in names.attributes:
        if node.attr not in _RENAMED or id(node) in context.claimed:
            continue
        middle = node.value
        if not (isinstance(middle, ast.Attribute) and middle.attr == "experimental"):
            continue
        root = middle.value
        if not isinstance(root, ast.Name) or names.qualified(root) is not None:
            continue  # strict resolution decided it: the other rules' business
        homes = _keras_modules(context, root)
        if homes is None or not context.wants(CODE, node):
            continue
        new = f"{root.id}.{_RENAMED[node.attr]}"
        old = f"{homes[0]}.experimental.{node.attr}"
        context.fix(
            CODE,
            node,
            f"{short(old)} -> {new} (as each module `{root.id}` may hold has it)",
            [context.edit(node, new)],
            consumes=context.loads_in(node),
            spellings=[Spelling(new, None, root)],  # `root` is still read
            manual=short(old),
            installs=context.target == "shim",
        )


def _keras_modules(context: Context, root: ast.Name) -> list[str] | None:
    """The Keras mixed_precision modules `root` may hold, when it holds nothing else."""
    scope = context.names.scope_of_load.get(id(root))
    bindings = context.names.lookup(root.id, scope) if scope is not None else None
    deciding = [b for b in bindings or () if not b.none_fallback]
    homes = [context.names.binding_qualified(b) for b in deciding]
    if (
        len(deciding) < 2
        or any(
            f"{home}.experimental" not in table.KERAS_EXPERIMENTAL
            for home in homes
            if home is not None
        )
        or None in homes
    ):
        return None
    return [home for home in dict.fromkeys(homes) if home is not None]


# -- keras2, keras3: the experimental class in one branch, the new one in the other ----------------
def _class_aliases_two_ways(context: Context) -> list[tuple[str, list[Binding]]]:
    """`cls = <new class>` / `cls = <experimental class>` (a feature detection the codemod cannot
    read, OpenNMT-tf's `wrapper_class`): every binding an alias of one of the two."""
    names = context.names
    found = []
    for scope in names.scopes:
        for name, bindings in scope.bindings.items():
            deciding = [b for b in bindings if not b.none_fallback]
            held = {names.binding_qualified(b) for b in deciding if b.alias_of is not None}
            if (
                len(deciding) > 1
                and all(b.alias_of is not None and not b.is_import for b in deciding)
                and held & table.OLD_LSO
                and held <= table.OLD_LSO | table.TF24_LSO
            ):
                found.append((name, deciding))
    return found


def _follow_class_alias(context: Context, gates: Gates, name: str, bindings: list[Binding]) -> None:
    """Every use an isinstance/issubclass check or a call `cls(optimizer, **kwargs)` whose kwargs
    hold at most loss_scale='dynamic' (the new class's default): the experimental class becomes
    the new one and loss_scale='dynamic' goes. Otherwise the sweep's findings stay."""
    names = context.names
    calls: list[ast.Call] = []
    kwargs: list[ast.Name] = []
    for use in names.uses(bindings[0]):
        parent = gates.parent(use)
        if not isinstance(parent, ast.Call):
            return
        if parent.func is use:
            spread = [k.value for k in parent.keywords if k.arg is None]
            if len(parent.args) != 1 or len(parent.keywords) != len(spread) or len(spread) > 1:
                return
            if spread and not isinstance(spread[0], ast.Name):
                return
            calls.append(parent)
            kwargs += [k for k in spread if isinstance(k, ast.Name)]
        elif not _checked_against(context, parent, use):
            return
    emptied = _dynamic_only(context, kwargs, calls)
    old = [b for b in bindings if names.binding_qualified(b) in table.OLD_LSO]
    wanted = all(b.alias_of is not None and context.wants(CODE, b.alias_of) for b in old)
    if emptied is None or not calls or not wanted:
        return
    for binding in old:
        assert binding.alias_of is not None
        qualified = names.binding_qualified(binding) or ""
        new = table.new_home(qualified, context.target)
        spelled = context.spell(binding.alias_of, new) if new else None
        if new is None or spelled is None:
            return
        edits = [context.edit(binding.alias_of, spelled.text)]
        edits += [
            context.edit(value, "dict()" if isinstance(value, ast.Call) else "{}")
            for value in emptied
        ]
        context.fix(
            CODE,
            binding.alias_of,
            arrow(qualified, new, new_suffix=f" (two-way alias `{name}`: loss_scale dropped)"),
            edits,
            consumes=context.loads_in(binding.alias_of),
            spellings=[spelled],
            manual=short(qualified),
        )
        emptied = []
    if context.target == "keras3":
        for call in calls:
            if context.wants(keras3_loss_scale_rule.CODE, call):
                context.note(
                    keras3_loss_scale_rule.CODE, call, keras3_loss_scale_rule.DYNAMIC_RULE_NOTE
                )


def _checked_against(context: Context, check: ast.Call, use: ast.Name) -> bool:
    func = check.func
    return (
        isinstance(func, ast.Name)
        and func.id in ("isinstance", "issubclass")
        and context.names.is_builtin(func)
        and len(check.args) == 2
        and check.args[1] is use
    )


def _dynamic_only(
    context: Context, kwargs: list[ast.Name], calls: list[ast.Call]
) -> list[ast.expr] | None:
    """The values bound to the `**kwargs` names that hold loss_scale='dynamic' (to empty), when
    every binding is a dict of nothing else and every use is one of `calls`' `**`; else None."""
    names = context.names
    spread = {id(k.value) for call in calls for k in call.keywords if k.arg is None}
    emptied: list[ast.expr] = []
    for name in {k.id: k for k in kwargs}.values():
        scope = names.scope_of_load.get(id(name))
        bindings = names.lookup(name.id, scope) if scope is not None else None
        for binding in bindings or ():
            statement = binding.statement
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                return None
            if any(id(use) not in spread for use in names.uses(binding)):
                return None
            items = _dict_items(context, statement.value)
            if items is None or any(
                key != "loss_scale" or not (isinstance(v, ast.Constant) and v.value == "dynamic")
                for key, v in items
            ):
                return None
            if items:
                emptied.append(statement.value)
    return emptied


def _dict_items(context: Context, value: ast.expr) -> list[tuple[str | None, ast.expr]] | None:
    """A dict display or `dict(k=v, ...)`: its (key, value) pairs; None for anything else."""
    if isinstance(value, ast.Dict):
        keys = [
            k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
            for k in value.keys
        ]
        return list(zip(keys, value.values, strict=True))
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dict"
        and context.names.is_builtin(value.func)
        and not value.args
    ):
        return [(k.arg, k.value) for k in value.keywords]
    return None


# -- shim: the module as a value -----------------------------------------------------------------
def _shim_values(context: Context, gates: Gates) -> None:
    names = context.names
    # A removed module is an attribute named as its last part, or a name some binding of which
    # (an import or alias) is one.
    bound = names.bound_to(lambda base: _old_namespace(table.public_of_private(base, base)))
    references: list[ast.Attribute | ast.Name] = [
        *(node for node in names.attributes if node.attr in _OLD_NAMESPACE_ENDS),
        *(node for node in names.loads if node.id in bound),
    ]
    for node in references:
        if id(node) in context.claimed or not isinstance(node.ctx, ast.Load):
            continue
        qualified = context.qualified(node)
        if qualified is None or not _old_namespace(qualified):
            continue
        parent = gates.parent(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            continue  # a member read (`mp.set_policy`): the member rules' business
        held = "held as a value"
        _shim_rewrite(context, gates, node, qualified, new=table.SHIM_EXPERIMENTAL, why=held)
    for binding, why in _aliases_bound_several_ways(context):
        assert binding.alias_of is not None
        qualified = names.qualified(binding.alias_of) or ""
        new = _shim_name(qualified)
        if new is not None:
            _shim_rewrite(context, gates, binding.alias_of, qualified, new=new, why=why)


# The last parts of the removed modules `table.is_old_namespace` knows (a private name read as its
# public one keeps its last part).
_OLD_NAMESPACE_ENDS = frozenset(
    name.rpartition(".")[2] for name in (*table.KERAS_EXPERIMENTAL, *table.TF_EXPERIMENTAL)
)


def _old_namespace(qualified: str) -> bool:
    return table.is_old_namespace(qualified) and not qualified.startswith(
        table.PRIVATE_KERAS_EXPERIMENTAL
    )


def _shim_name(qualified: str) -> str | None:
    """compat_lso.experimental or its member for a removed namespace or member, or None."""
    return table.shim_experimental(qualified)


def _aliases_bound_several_ways(context: Context) -> list[tuple[Binding, str]]:
    """`x = <removed name>` where `x` has other bindings too (no use of it resolves), or, for the
    module, where nothing here reads `x` (another module may import it): with why."""
    found: list[tuple[Binding, str]] = []
    names = context.names
    aliased = {b.name for b in names.walk.import_bindings if b.alias_of is not None}
    if not aliased:
        return found
    rewritten = _rewritten(context)
    for scope in names.scopes:
        for name, bindings in scope.bindings.items():
            if name not in aliased:
                continue
            deciding = [b for b in bindings if not b.none_fallback]
            for binding in deciding:
                value = binding.alias_of
                if binding.is_import or value is None or id(value) in rewritten:
                    continue
                new = _shim_name(names.qualified(value) or "")
                if new is None:
                    continue
                if len(deciding) > 1 and not _read_only_by_fixes(context, binding):
                    found.append((binding, f"`{binding.name}` is bound more than one way"))
                elif new == table.SHIM_EXPERIMENTAL and not names.uses(binding):
                    found.append((binding, f"`{binding.name}` is not read here"))
    return found


def _read_only_by_fixes(context: Context, binding: Binding) -> bool:
    """Whether every read of `binding` resolves (through a binding of compat_lso.experimental that
    it stands for on the shim target, names.Analysis) and a fix rewrites it: the binding goes."""
    uses = context.names.uses(binding)
    consumed = {load for fix in context.fixes if fix.active for load in fix.consumes}
    return bool(uses) and all(
        id(use) in consumed and context.names.binding_of(use) is not None for use in uses
    )


def _rewritten(context: Context) -> set[int]:
    return {id(fix.node) for fix in context.fixes if fix.active}


def _shim_rewrite(
    context: Context, gates: Gates, node: ast.expr, qualified: str, *, new: str, why: str
) -> None:
    """Write `new` for `node` when every member read through its value here exists on it."""
    if not context.wants(CODE, node) or context.gate_note(node, CODE):
        return  # a branch for TF < 2.4 (LSO104): deleting it is the fix
    if new == table.SHIM_EXPERIMENTAL:
        flow = Flow(context.names, gates, lambda name: table.gone(name, "shim") is not None)
        flow.taint([node])
        for attribute in context.names.attributes:
            read = id(attribute) in flow.tainted and id(attribute.value) in flow.tainted
            if read and attribute.attr not in table.SHIM_EXPERIMENTAL_NAMES:
                return  # a member the shim lacks is read: the sweep's finding stays
    spelled = context.spell(node, new)
    if spelled is None:
        return
    context.fix(
        CODE,
        node,
        f"{short(qualified)} -> {new} ({why}"
        + ("; compat_lso.install() added)" if new.rpartition(".")[2] in _INSTALLS else ")"),
        [context.edit(node, spelled.text)],
        consumes=context.loads_in(node),
        spellings=[spelled],
        manual=short(qualified),
        installs=new.rpartition(".")[2] in _INSTALLS,
    )
