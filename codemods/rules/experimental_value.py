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
from codemods.rules._rename import short

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
    if context.target == "shim":
        _shim_values(context)


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


# -- shim: the module as a value -----------------------------------------------------------------
def _shim_values(context: Context) -> None:
    names = context.names
    gates = Gates(context.tree)
    references: list[ast.Attribute | ast.Name] = [*names.attributes, *names.loads]
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


def _old_namespace(qualified: str) -> bool:
    return table.is_old_namespace(qualified) and not qualified.startswith(
        table.PRIVATE_KERAS_EXPERIMENTAL
    )


def _shim_name(qualified: str) -> str | None:
    """compat_lso.experimental or its member for a removed namespace or member, or None."""
    if _old_namespace(qualified):
        return table.SHIM_EXPERIMENTAL
    module, _, member = qualified.rpartition(".")
    if _old_namespace(module) and member in table.SHIM_EXPERIMENTAL_NAMES:
        return f"{table.SHIM_EXPERIMENTAL}.{member}"
    return None


def _aliases_bound_several_ways(context: Context) -> list[tuple[Binding, str]]:
    """`x = <removed name>` where `x` has other bindings too (no use of it resolves), or, for the
    module, where nothing here reads `x` (another module may import it): with why."""
    found = []
    names = context.names
    for scope in names.scopes:
        for bindings in scope.bindings.values():
            deciding = [b for b in bindings if not b.none_fallback]
            for binding in deciding:
                value = binding.alias_of
                if binding.is_import or value is None or id(value) in _rewritten(context):
                    continue
                new = _shim_name(names.qualified(value) or "")
                if new is None:
                    continue
                if len(deciding) > 1:
                    found.append((binding, f"`{binding.name}` is bound more than one way"))
                elif new == table.SHIM_EXPERIMENTAL and not names.uses(binding):
                    found.append((binding, f"`{binding.name}` is not read here"))
    return found


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
