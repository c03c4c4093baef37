"""The rule registry: one module per rule code, driven by `codemods.table`.

Call rules look at every call first (they need the whole call: its arguments, or the class in an
isinstance check); reference rules then get every remaining reference to an old name, dispatched by
the code `table.classify` gives it; module rules last see the whole module once (the rules for
TF 2.4-2.15 code, whose names are not old names: they follow values through a function). A rule
claims what it handled so nothing is handled twice.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from types import ModuleType

from codemods import table
from codemods.meaning.module import Context
from codemods.rules import (
    compile_loss_scale_optimizer,
    contrib_mixed_precision,
    dtype_name,
    experimental_value,
    global_policy,
    gradient_scaling,
    graph_rewrite,
    isinstance_check,
    keras2_surface,
    keras3_loss_scale_rule,
    legacy_optimizer,
    loss_scale_call,
    loss_scale_classes,
    loss_scale_optimizer_call,
    loss_scale_optimizer_reference,
    lr_argument,
    manual_loss_scaling,
    mixed_precision_loss_scale_optimizer,
    policy,
    private_keras_module,
    private_public_spelling,
    set_policy,
    shared_optimizer,
    shim_experimental_call,
    tf24_call,
    tf24_reference,
    tf24_state,
    unknown_member,
    unproven_gradient_scaling,
)

RULE_MODULES: tuple[ModuleType, ...] = (
    loss_scale_optimizer_call,
    isinstance_check,
    loss_scale_optimizer_reference,
    set_policy,
    global_policy,
    policy,
    loss_scale_classes,
    graph_rewrite,
    mixed_precision_loss_scale_optimizer,
    loss_scale_call,
    manual_loss_scaling,
    unknown_member,
    shim_experimental_call,
    private_keras_module,
    tf24_call,
    tf24_reference,
    tf24_state,
    keras2_surface,
    dtype_name,
    gradient_scaling,
    unproven_gradient_scaling,
    keras3_loss_scale_rule,
    compile_loss_scale_optimizer,
    legacy_optimizer,
    lr_argument,
    shared_optimizer,
    experimental_value,
    contrib_mixed_precision,
    # Last: what no other rule rewrote.
    private_public_spelling,
)

CallRule = Callable[[Context, ast.Call], bool]
# A call rule says which calls it looks at: by what the callee means (`callee(qualified)`), or by
# how it is spelled (SPELLED: the name called, `isinstance`, or the method, `loss_scale`). Per
# meaning and spelling, the rules that can take a call, in registry order: decided once per
# callee, not once per call and rule.
_CALL_RULES: tuple[tuple[CallRule, Callable[[str], bool] | None, frozenset[str]], ...] = tuple(
    (module.on_call, getattr(module, "callee", None), getattr(module, "SPELLED", frozenset()))
    for module in RULE_MODULES
    if hasattr(module, "on_call")
)
assert all(callee or spelled for _, callee, spelled in _CALL_RULES), "each says which calls"
assert all(hasattr(m, "CALLEE_ENDS") for m in RULE_MODULES if hasattr(m, "callee")), "and ends"
# The last parts of the callees some call rule looks at: `self.dense(x)` is never resolved.
_CALLED_ATTRIBUTES: frozenset[str] = frozenset().union(
    *(getattr(module, "CALLEE_ENDS", ()) for module in RULE_MODULES),
    *(spelled for _, _, spelled in _CALL_RULES),
)
_RULES_FOR: dict[tuple[str | None, str | None], tuple[CallRule, ...]] = {}


def _call_rules(qualified: str | None, spelled: str | None) -> tuple[CallRule, ...]:
    rules = _RULES_FOR.get((qualified, spelled))
    if rules is None:
        rules = _RULES_FOR[qualified, spelled] = tuple(
            rule
            for rule, callee, spellings in _CALL_RULES
            if (callee is not None and qualified is not None and callee(qualified))
            or spelled in spellings
        )
    return rules


def _spelled(func: ast.expr) -> str | None:
    """The name a call calls, or the attribute it calls: `isinstance`, `loss_scale`."""
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


# Keyed by the code `table.classify` gives a name; a module handling names classified under
# another rule's code says so with NAME_CODE (the experimental class outside a call: LSO001's
# name, LSO003's rule).
REFERENCE_RULES: dict[str, Callable[[Context, ast.expr, str], None]] = {
    getattr(module, "NAME_CODE", module.CODE): module.on_reference
    for module in RULE_MODULES
    if hasattr(module, "on_reference")
}

# Run once per module, after the reference rules, in this order.
MODULE_RULES: tuple[Callable[[Context], None], ...] = tuple(
    module.on_module for module in RULE_MODULES if hasattr(module, "on_module")
)

assert {module.CODE for module in RULE_MODULES} == {r.code for r in table.MIGRATION_RULES}, (
    "every rule in the table has a module"
)


def run_rules(context: Context) -> None:
    names = context.names
    # The right-hand side of `mp = tf.keras.mixed_precision.experimental` is settled with the alias.
    for scope in names.scopes:
        for bindings in scope.bindings.values():
            for binding in bindings:
                if binding.alias_of is not None:
                    context.claim(binding.alias_of)
    for call in names.calls_ending_in(_CALLED_ATTRIBUTES):
        func = call.func
        for rule in _call_rules(context.qualified(func), _spelled(func)):
            if rule(context, call):
                break
    roots = names.bound_to(_old_module)  # the names whose reads, or members, can be old names
    references: list[ast.Attribute | ast.Name] = [
        *names.attributes,
        *(load for load in names.loads if load.id in roots),
    ]
    for node in references:
        if id(node) in context.claimed or not _may_name_old_api(node, roots):
            continue
        qualified = context.qualified(node)
        if qualified is None:
            continue
        found = _classified(qualified)
        if found is not None:
            REFERENCE_RULES[found[0]](context, node, qualified)
        # A removed namespace used as a value (returned, passed, stored) is not a member with "no
        # known equivalent": the sweep (codemods/sweep/findings.py) reports where it escapes to
        # (LSO103).
    for module_rule in MODULE_RULES:
        module_rule(context)


# Every name table.classify accepts has one of these words before its last part: its module is an
# experimental namespace or lies in a private package (tests/codemods/test_codemod_registry.py).
# A read of a name, or of `name.member`, means the name's import plus at most that member, so it
# can be an old name only where some import or alias binds the name to something with one of them.
_OLD_MODULE_WORDS = ("experimental", "mixed_precision")


def _old_module(qualified: str) -> bool:
    return any(word in qualified for word in _OLD_MODULE_WORDS)


def _may_name_old_api(node: ast.Attribute | ast.Name, roots: frozenset[str]) -> bool:
    """A syntactic test that spares resolving the many references that cannot be old names (a
    name no import or alias binds to an old module, an attribute not named like an old member or
    module): `tf.float32` is never resolved."""
    if isinstance(node, ast.Name):
        return node.id in roots
    if node.attr in table.MEMBER_NAMES:
        return True
    parent = node.value
    return (isinstance(parent, ast.Name) and parent.id in roots) or (
        isinstance(parent, ast.Attribute) and parent.attr == "experimental"
    )


_CLASSIFIED: dict[str, tuple[str, str] | None] = {}


def _classified(qualified: str) -> tuple[str, str] | None:
    """table.classify, once per name (the same few hundred names recur in every module)."""
    if qualified not in _CLASSIFIED:
        _CLASSIFIED[qualified] = table.classify(qualified)
    return _CLASSIFIED[qualified]
