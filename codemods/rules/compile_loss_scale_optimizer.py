"""LSO023 (shim): compile()'s loss scale optimizer made compat_lso's where the code relies on it.

Under 'mixed_float16' compile() wraps a plain optimizer in a loss scale optimizer; on Keras 3 in
Keras 3's own class, which has none of TF 2.4's get_scaled_loss, loss_scale, dynamic_counter, ...
and divides the gradients apply_gradients gets. Where the file relies on TF 2.4's class through
`x.optimizer` (table.COMPILE_SURFACE read there, or `x.optimizer.apply_gradients` given the
gradients of an unscaled loss) and makes no loss scale optimizer itself, --target shim passes
`compat_lso.LossScaleOptimizer(optimizer)` to compile(), which keeps it (Keras 2 and 3 alike).

Exact only where compile() is known to wrap (`plan` says why not elsewhere): a mixed_float16
policy statement directly in the body of the module or of the compiling function, before the
call, with no other policy set in between; `model.compile(...)` on a name bound after it, in a
file that overrides no compile(); its optimizer a Keras optimizer class called, a name last bound
to one, a name Keras knows ("adam": `tf.keras.optimizers.get("adam")`, what compile() does) or
none (compile()'s default, "rmsprop"). Keras 3's class also trains differently with nothing read
(a skipped step does not advance `iterations`, which schedules and Adam read), so every compile()
under a policy that may be 'mixed_float16' is taken over: wrapped where exact, and where not (or
where the policy is set here and compile() runs elsewhere) `compat_lso.install()` is added at
start-up (`Fix.installs`), after which compile() wraps as under `python -m compat_lso run`.
`wraps` tells LSO010, LSO011 and LSO019 whether `x.optimizer` is compat_lso's class.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from codemods import table
from codemods.meaning.gradients import GradientFlow
from codemods.meaning.module import Context
from codemods.rules._tf24 import _cached, append_keyword, bound_call, parent, tensorflow_name
from codemods.source import Edit

CODE = "LSO023"
_LSO = frozenset(
    {
        *table.TF24_LSO,
        *table.OLD_LSO,
        *table.NEW_LSO,
        *table.KERAS3_ONLY_LSO,
        table.SHIM_LSO,
        table.SHIM_EXPERIMENTAL_LSO,
    }
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# A model made by one of these keeps the dtype policy of what it restores, not the global one.
_RESTORED = ("load_model", "model_from_", "clone_model", "from_config")


@dataclass
class Plan:
    """What the rule does in one file: the wraps it makes, and the compile() calls it cannot."""

    reliance: list[ast.Attribute] = field(default_factory=list)  # what needs TF 2.4's class
    wrapped: list[tuple[ast.Call, str]] = field(default_factory=list)  # (compile call, why)
    refused: list[tuple[ast.Call, str]] = field(default_factory=list)  # (compile call, why not)
    apply_unscaled: list[ast.Call] = field(default_factory=list)  # wrap-only on x.optimizer
    install: ast.Call | None = None  # where compat_lso.install() is needed: a compile, a policy
    installed: bool = False  # the module calls compat_lso.install() itself


def wraps(context: Context) -> bool:
    """Whether every compile() here gets compat_lso's class: `x.optimizer` is that one."""
    found = plan(context)
    return (
        found.installed or found.install is not None or (bool(found.wrapped) and not found.refused)
    )


def installs_at_start(tree: ast.Module) -> bool:
    """Whether the module calls `compat_lso.install()` in its own body already."""
    return any(
        isinstance(node, ast.Expr)
        and isinstance(call := node.value, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "install"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == table.SHIM_MODULE
        for node in tree.body
    )


def compile_calls(context: Context) -> list[ast.Call]:
    """`model.compile(...)` calls (not `re.compile`, not `self.compile` in an override)."""
    return [
        call
        for call in context.names.calls
        if isinstance(func := call.func, ast.Attribute)
        and func.attr == "compile"
        and isinstance(func.value, ast.Name)
        and context.qualified(func) is None  # not re.compile
        and func.value.id not in ("self", "cls")
    ]


def possible_policies(context: Context) -> list[ast.Call]:
    """The policy statements that may set 'mixed_float16' (a literal other name does not)."""
    return [s for s in _policy_statements(context) if _may_set_mixed_float16(context, s)]


@_cached
def plan(context: Context) -> Plan:
    result = Plan()
    if context.target != "shim" or CODE not in context.enabled:
        return result
    if any(context.names.calls_to(_LSO)):
        return result  # `x.optimizer` is taken to be the one the file makes (LSO015's)
    if installs_at_start(context.tree):
        result.installed = True
        return result
    result.reliance = [
        node
        for node in context.names.attributes
        if node.attr in table.COMPILE_SURFACE and _on_optimizer(node.value)
    ]
    result.apply_unscaled = _apply_unscaled(context)
    possible = possible_policies(context)
    if not possible:
        return result
    policies = [s for s in possible if _sets_mixed_float16(context, s)]
    overridden = _compile_override(context)
    compiles = compile_calls(context)
    for call in compiles:
        why_not = (
            f"compile() is overridden at line {overridden.lineno}"
            if overridden is not None
            else _policy_problem(context, call, policies)
            if policies
            else f"the policy set at line {possible[0].lineno} is only known at run time"
        )
        text = None
        if not why_not and not context.wants(CODE, call):
            why_not = "suppressed"
        if not why_not:
            text = _wrapped_optimizer(context, call)
            if text.startswith("!"):
                why_not, text = text[1:], None
        if text is not None:
            result.wrapped.append((call, text))
        else:
            result.refused.append((call, why_not))
    left = [call for call, why_not in result.refused if why_not != "suppressed"]
    if left:
        result.install = left[0]
    elif not compiles and context.wants(CODE, possible[0]):
        result.install = possible[0]  # compile() runs elsewhere, under this policy
    return result


# What the fixes that take compile() over by `compat_lso.install()` add (`python -m compat_lso
# run` does the same).
_INSTALLED = "compat_lso.install() added"


def on_module(context: Context) -> None:
    found = plan(context)
    source = context.source
    for call, text in found.wrapped:
        if not context.wants(CODE, call):
            continue
        assert isinstance(call.func, ast.Attribute)
        written = _optimizer_argument(call)
        uses = ", ".join(
            map(str, sorted({n.lineno for n in found.reliance + found.apply_unscaled}))
        )
        fact = (
            f"Keras 3's own wrapper lacks the TF 2.4 API used at line {uses}"
            if uses
            else "Keras 3's own wrapper does not count skipped steps in `iterations`"
        )
        if isinstance(written, ast.expr):
            edits = _wrap(context, written, text)
        else:
            position, keyword = append_keyword(context, call, f"optimizer={text}")
            edits = [Edit(position, position, keyword)]
        message = f"compile()'s optimizer -> {text}: {fact}"
        context.fix(CODE, call, message, edits, consumes=set())
    for call, why_not in found.refused:
        if why_not == "suppressed" or not context.wants(CODE, call):
            continue
        message = (
            f"{source.segment(call.func)}() wraps with compat_lso's class ({_INSTALLED}): {why_not}"
        )
        context.fix(CODE, call, message, [], consumes=set(), installs=True)
    if found.install is not None and not found.refused:
        setter = source.segment(found.install.func)
        message = f"{setter}(): compile() elsewhere wraps with compat_lso's class ({_INSTALLED})"
        context.fix(CODE, found.install, message, [], consumes=set(), installs=True)
    if not found.wrapped and not found.refused and found.install is None:
        for apply in found.apply_unscaled:
            if context.wants(CODE, apply):
                receiver = source.segment(apply.func)
                context.report(
                    CODE,
                    apply,
                    f"{receiver} gets gradients of an unscaled loss: under mixed_float16 "
                    "compile() wraps in Keras 3's own class, which divides them by the loss scale",
                    reason="no-equivalent",
                )


def _on_optimizer(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "optimizer"


def _apply_unscaled(context: Context) -> list[ast.Call]:
    if "apply_gradients" not in context.source.text:
        return []
    found, flow = [], None
    for call in context.names.calls:
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "apply_gradients"
            and _on_optimizer(func.value)
            and call.args
        ):
            flow = flow or GradientFlow(context)
            if flow.gradients(call.args[0]).verdict == "unscaled-loss":
                found.append(call)
    return found


def _policy_statements(context: Context) -> list[ast.Call]:
    return list(context.names.calls_to(table.POLICY_SETTERS))


def _sets_mixed_float16(context: Context, call: ast.Call) -> bool:
    if len(call.args) != 1 or call.keywords:
        return False
    policy = call.args[0]
    if isinstance(policy, ast.Name):  # `policy = Policy("mixed_float16")` before
        policy = bound_call(context, policy) or policy
    if isinstance(policy, ast.Call):
        qualified = context.qualified(policy.func) or ""
        if not qualified.endswith("mixed_precision.Policy") and not qualified.endswith(
            "mixed_precision.experimental.Policy"
        ):
            return False
        if len(policy.args) != 1 or policy.keywords:
            return False
        policy = policy.args[0]
    return isinstance(policy, ast.Constant) and policy.value == "mixed_float16"


def _may_set_mixed_float16(context: Context, call: ast.Call) -> bool:
    """False only where the policy is written as another name (`'float32'`, `Policy('float32')`)."""
    if len(call.args) != 1 or call.keywords:
        return True
    policy = call.args[0]
    if isinstance(policy, ast.Name):
        policy = bound_call(context, policy) or policy
    if isinstance(policy, ast.Call) and (context.qualified(policy.func) or "").endswith(".Policy"):
        names = [k.value for k in policy.keywords if k.arg == "name"] + policy.args[:1]
        policy = names[0] if names else policy
    if isinstance(policy, ast.Constant):
        return policy.value == "mixed_float16"
    return True


def _scope(context: Context, node: ast.AST) -> ast.AST:
    current = parent(context, node)
    while current is not None and not isinstance(current, _SCOPES):
        current = parent(context, current)
    return current if current is not None else context.tree


def _policy_problem(context: Context, call: ast.Call, policies: list[ast.Call]) -> str:
    """'' where a mixed_float16 policy is set unconditionally before `call` and its model."""
    scope = _scope(context, call)
    bodies = [context.tree.body] + ([scope.body] if isinstance(scope, _SCOPES[:2]) else [])
    before = [
        p
        for p in policies
        if p.lineno < call.lineno
        and isinstance(statement := parent(context, p), ast.Expr)
        and any(statement in body for body in bodies)
    ]
    if not before:
        return "no set_global_policy('mixed_float16') runs unconditionally before it"
    policy = max(before, key=lambda p: p.lineno)
    again = [p.lineno for p in _policy_statements(context) if p.lineno < call.lineno]
    if again != [policy.lineno]:
        return f"the policy is set more than once before it (lines {again})"
    assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
    model = call.func.value
    built = bound_call(context, model)
    if built is None or built.lineno <= policy.lineno or _scope(context, built) is not scope:
        return (
            f"`{model.id}` is not built after the policy is set (line {policy.lineno}) in the "
            "same function"
        )
    maker = context.qualified(built.func) or ""
    if any(word in maker for word in _RESTORED):
        return f"`{model.id}` is restored by {maker}, with the policy it was saved with"
    return ""


def _compile_override(context: Context) -> ast.FunctionDef | None:
    """The first class body, in the file's order, that defines compile()."""
    for scope in context.names.scopes:
        if isinstance(node := scope.node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "compile":
                    return item
    return None


def _optimizer_argument(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "optimizer":
            return keyword.value
    return call.args[0] if call.args else None


def _wrap(context: Context, written: ast.expr, text: str) -> list[Edit]:
    """The edits that make `written` into `text`: where `text` wraps it as written, two
    insertions around it, so that a rule rewriting inside it (LSO024's legacy optimizer, found
    by the differential tests: one edit over the whole argument overlapped it, an internal error)
    still can."""
    segment = context.source.segment(written)
    start, end = context.source.span(written)
    prefix = text[: len(text) - len(segment) - 1]
    if text == f"{prefix}{segment})":
        return [Edit(start, start, prefix), Edit(end, end, ")")]
    return [context.edit(written, text)]


def _wrapped_optimizer(context: Context, call: ast.Call) -> str:
    """compile()'s optimizer argument wrapped in compat_lso's class, or '!' and why not."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return "!its arguments are unpacked with * or **"
    if any(k.arg == "auto_scale_loss" for k in call.keywords):
        return "!it passes Keras 3's auto_scale_loss"
    written = _optimizer_argument(call)
    assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
    if written is None or isinstance(written, ast.Constant):
        name = "'rmsprop'" if written is None else context.source.segment(written)
        value = "rmsprop" if written is None else written.value
        if not isinstance(value, str) or value.lower() not in table.OPTIMIZER_NAMES:
            return f"!{name} is not an optimizer name Keras 2 and Keras 3 both know"
        tf = tensorflow_name(context, call.func.value)
        if tf is None:
            return f"!no `import tensorflow` to write tf.keras.optimizers.get({name}) with"
        return f"{table.SHIM_LSO}({tf}.keras.optimizers.get({name}))"
    made = bound_call(context, written) if isinstance(written, ast.Name) else written
    qualified = context.qualified(made.func) if isinstance(made, ast.Call) else None
    if qualified is None or not qualified.startswith(table.OPTIMIZER_MODULES):
        return (
            f"!`{context.source.segment(written)}` is not known to be a plain optimizer (a loss "
            "scale optimizer would be wrapped twice)"
        )
    return f"{table.SHIM_LSO}({context.source.segment(written)})"
