"""LSO016: the TF 2.4-2.15 LossScaleOptimizer class used other than by calling it.

- shim: in TF 2.4 code, base classes, aliases, arguments and `.from_config` move to
  compat_lso.LossScaleOptimizer. An alias (`LSO = tf.keras.mixed_precision.LossScaleOptimizer`) is
  re-pointed once and its uses follow it. isinstance/issubclass checks and annotations keep the
  native class: the shim's class subclasses it on every backend, so the check still accepts
  both the shim's objects and the ones compile() wraps under 'mixed_float16', which a check
  against compat_lso.LossScaleOptimizer would reject.
- keras3: a TF 2.4 subclass is reported (Keras 3's constructor and methods differ); any other
  reference means the same class there.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.meaning.names import Binding
from codemods.rules import _subclass
from codemods.rules._rename import short
from codemods.rules._tf24 import bind, evidence, parent

CODE = "LSO016"


def on_module(context: Context) -> None:
    if context.target == "keras2":
        return
    names = context.names
    imported = names.walk.imported  # (the names an import or alias binds: no other one is)
    class_bindings = [
        binding
        for scope in names.scopes
        for name, bindings in scope.bindings.items()
        if name in imported
        for binding in bindings
        if (binding.is_import or binding.alias_of is not None)
        and names.binding_qualified(binding) in table.TF24_LSO
    ]
    references: list[ast.expr] = [
        node
        for node in names.attributes
        if node.attr == "LossScaleOptimizer" and context.qualified(node) in table.TF24_LSO
    ]
    references += [use for b in class_bindings if b.is_import for use in names.uses(b)]
    references += [use for b in class_bindings if b.alias_of is not None for use in names.uses(b)]
    if (not references and not class_bindings) or evidence(context).keras3_code:
        return
    bases = {
        id(base)
        for scope in names.scopes
        if isinstance(scope.node, ast.ClassDef)
        for base in scope.node.bases
    }
    if context.target == "keras3":
        for node in references:
            if id(node) in bases and id(node) not in context.claimed and context.wants(CODE, node):
                cls = parent(context, node)
                reads = _subclass.keras2_reads(cls) if isinstance(cls, ast.ClassDef) else []
                help = _subclass.help_for(reads) if reads else None
                context.report(
                    CODE,
                    node,
                    f"{_name(context, node)} subclassed: Keras 3's class has other methods and "
                    "arguments",
                    reason="no-equivalent",
                    help=help,
                )
        return
    kept = _kept_native(context)
    for node in references:
        if id(node) in context.claimed or id(node) in kept:
            continue
        if isinstance(node, ast.Name) and _through_moved_alias(context, node):
            continue  # the alias itself is re-pointed below
        if not context.wants(CODE, node):
            context.claim(node)
            continue
        _move(context, node, f"{_name(context, node)} -> {table.SHIM_LSO}")
    for binding in class_bindings:
        if binding.alias_of is not None:
            _move_alias(context, binding)


def _move(context: Context, node: ast.expr, message: str) -> None:
    spelled = context.spell(node, table.SHIM_LSO)
    if spelled is None:
        context.report(
            CODE, node, f"{_name(context, node)} not moved: cannot write it here", reason="limit"
        )
        return
    context.fix(
        CODE,
        node,
        message,
        [context.edit(node, spelled.text)],
        consumes=context.loads_in(node),
        spellings=[spelled],
    )


def alias_moves(context: Context, binding: Binding) -> bool:
    """Whether the shim target re-points this alias of the class (then its calls follow it)."""
    return (
        binding.statement is not None
        and context.target == "shim"
        and context.wants(CODE, binding.statement)
        and not evidence(context).keras3_code
        and _keras3_call_through(context, binding) is None
    )


def _keras3_call_through(context: Context, binding: Binding) -> ast.Name | None:
    for use in context.names.uses(binding):
        up = parent(context, use)
        if isinstance(up, ast.Call) and up.func is use and bind(up).kind == "keras3":
            return use
    return None


def _move_alias(context: Context, binding: Binding) -> None:
    alias_of = binding.alias_of
    assert alias_of is not None and binding.statement is not None
    if not context.wants(CODE, binding.statement):
        return
    keras3_call = _keras3_call_through(context, binding)
    if keras3_call is not None:
        context.report(
            CODE,
            binding.statement,
            f"alias {binding.name} not moved: a Keras 3 call goes through it (line "
            f"{keras3_call.lineno}); its TF 2.4 calls are moved one by one",
            reason="choice",
        )
        return
    _move(
        context,
        alias_of,
        f"alias {binding.name} = {_name(context, alias_of)} -> {table.SHIM_LSO} (its uses follow)",
    )


def _through_moved_alias(context: Context, name: ast.Name) -> bool:
    names = context.names
    binding = names.binding_of(name)
    if binding is not None:
        return binding.alias_of is not None and alias_moves(context, binding)
    # Bound more than one way (`if ...: cls = <this class> else: cls = <the experimental one>`):
    # each alias moves, this class's here, the experimental one's to compat_lso.experimental
    # (LSO025), so the use follows them.
    scope = names.scope_of_load.get(id(name))
    found = names.lookup(name.id, scope) if scope is not None else None
    bindings = [b for b in found or () if not b.none_fallback]
    return bool(bindings) and all(
        b.alias_of is not None
        and (
            (
                names.binding_qualified(b) in table.OLD_LSO
                and not context.gate_note(b.alias_of, CODE)
            )
            or (names.binding_qualified(b) in table.TF24_LSO and alias_moves(context, b))
        )
        for b in bindings
    )


def _kept_native(context: Context) -> set[int]:
    """isinstance/issubclass class arguments and annotations: they keep the native class."""
    names = context.names
    kept: set[int] = set()
    for call in names.calls:
        func = call.func
        if (
            isinstance(func, ast.Name)
            and func.id in ("isinstance", "issubclass")
            and len(call.args) == 2
            and names.is_builtin(func)
        ):
            classes = call.args[1]
            for node in classes.elts if isinstance(classes, ast.Tuple) else [classes]:
                kept.add(id(node))
    for annotation in names.annotations:
        kept.update(id(n) for n in ast.walk(annotation))
    return kept


def _name(context: Context, node: ast.expr) -> str:
    return short(context.qualified(node) or context.source.segment(node))
