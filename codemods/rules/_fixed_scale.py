"""Keras 3's only fixed loss scale: the inner optimizer's `loss_scale_factor` (LSO001, LSO015).

Keras 3's LossScaleOptimizer is always dynamic. A Keras 3 optimizer given `loss_scale_factor=N`
multiplies the loss by N in `scale_loss` (which `Model.fit` calls) and divides the gradients by N
in `apply_gradients`, applying every step: TF 2.4's fixed mode. Two things make the rewrite exact
only in some places, so it is made only there and reported elsewhere:

- The object is no longer a LossScaleOptimizer: isinstance checks, `.inner_optimizer`,
  `.loss_scale` and the like read it differently. So the result may go only to `compile()` and to
  methods both classes have with the same meaning, and the file must not check anything against
  a LossScaleOptimizer class or read `.inner_optimizer` (once compiled, the optimizer is also
  `model.optimizer`, which such code may be looking at). Other files cannot be seen: the fix's
  message says so.
- Under the 'mixed_float16' policy, Keras 3's `compile()` wraps an optimizer that is not a
  LossScaleOptimizer in a dynamic one, whose constructor sets the inner `loss_scale_factor` to
  None (keras/src/trainers/trainer.py, keras/src/optimizers/loss_scale_optimizer.py): the fixed
  scale would silently become dynamic. Every compile() the result reaches gets
  `auto_scale_loss=False`, which only turns that wrapping off.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._tf24 import append_keyword, parent
from codemods.source import Edit, one_line

# What the rewritten optimizer may still be used for: the same meaning on both classes.
SAME_MEANING = frozenset(
    {
        "apply_gradients",
        "scale_loss",
        "get_scaled_loss",  # LSO011 turns the pair into scale_loss + apply_gradients
        "get_unscaled_gradients",
        "iterations",
        "learning_rate",
    }
)
NO_WRAP = "auto_scale_loss=False"


@dataclass
class FixedScale:
    edits: list[Edit]
    text: str  # the call's new text, for the message
    compiles: int  # how many compile() calls got auto_scale_loss=False


def rewrite(context: Context, call: ast.Call, inner: ast.expr, scale: str) -> FixedScale | str:
    """`LossScaleOptimizer(<Keras optimizer>(...), <fixed scale>)` -> `<...>(..., loss_scale_factor=
    scale)`, or why that would not be exact here."""
    source = context.source
    problem = _inner_problem(context, inner)
    if problem:
        return problem
    assert isinstance(inner, ast.Call)
    compiles = _compile_calls(context, call)
    if isinstance(compiles, str):
        return compiles
    looked_at = _read_as_loss_scale_optimizer(context)
    if looked_at:
        return looked_at
    start, end = source.span(inner)
    at, inserted = append_keyword(context, inner, f"loss_scale_factor={scale}")
    text = source.text[start:at] + inserted + source.text[at:end]
    edits = [context.edit(call, text)]
    for compile_call in compiles:
        keywords = {k.arg: k for k in compile_call.keywords}
        if "auto_scale_loss" in keywords:
            if not (
                isinstance(keywords["auto_scale_loss"].value, ast.Constant)
                and keywords["auto_scale_loss"].value.value is False
            ):
                return (
                    f"the compile() at line {compile_call.lineno} passes auto_scale_loss other "
                    "than False"
                )
            continue
        position, keyword = append_keyword(context, compile_call, NO_WRAP)
        edits.append(Edit(position, position, keyword))
    return FixedScale(edits, text, len(compiles))


def _inner_problem(context: Context, inner: ast.expr) -> str | None:
    if not isinstance(inner, ast.Call):
        return (
            f"the inner optimizer `{one_line(context.source.segment(inner), 30)}` is not built here"
        )
    module, _, name = (context.qualified(inner.func) or "").rpartition(".")
    if module not in table.KERAS3_OPTIMIZER_MODULES or not name[:1].isupper() or "Loss" in name:
        return (
            f"`{one_line(context.source.segment(inner.func), 30)}` is not a known Keras optimizer"
        )
    if any(isinstance(a, ast.Starred) for a in inner.args) or any(
        k.arg is None for k in inner.keywords
    ):
        return "the inner optimizer's arguments are unpacked with * or **"
    if any(k.arg == "loss_scale_factor" for k in inner.keywords):
        return "the inner optimizer already has a loss_scale_factor"
    return None


_LOSS_SCALE_OPTIMIZERS = (
    table.TF24_LSO
    | table.NEW_LSO
    | table.OLD_LSO
    | table.KERAS3_ONLY_LSO
    | {table.SHIM_EXPERIMENTAL_LSO}
)


def _read_as_loss_scale_optimizer(context: Context) -> str | None:
    """Where the file tells a LossScaleOptimizer apart, which the rewritten one would fail."""
    names = context.names
    for check in names.calls:
        func = check.func
        if not (
            isinstance(func, ast.Name)
            and func.id in ("isinstance", "issubclass")
            and len(check.args) == 2
            and names.is_builtin(func)
        ):
            continue
        classes = check.args[1]
        for node in classes.elts if isinstance(classes, ast.Tuple) else [classes]:
            if context.qualified(node) in _LOSS_SCALE_OPTIMIZERS:
                # The class is not repeated: the line's own finding (LSO002) names it, and the
                # fact stays within 160 characters after the call's qualified name.
                return f"line {check.lineno} checks {func.id}()"
    for attribute in names.attributes:
        if attribute.attr == "inner_optimizer":
            return f"line {attribute.lineno} reads `.inner_optimizer`"
    return None


def _compile_calls(context: Context, call: ast.Call) -> list[ast.Call] | str:
    """The compile() calls the optimizer built by `call` reaches, or why it cannot be followed."""
    above = parent(context, call)
    direct = _compile_of(context, call, above)
    if direct is not None:
        return [direct]
    if not (
        isinstance(above, ast.Assign)
        and len(above.targets) == 1
        and isinstance(above.targets[0], ast.Name)
    ):
        return "the optimizer is passed on, returned or stored where it is built"
    name = above.targets[0].id
    names = context.names
    bindings = next(
        (
            scope.bindings[name]
            for scope in names.scopes
            if any(b.node is above for b in scope.bindings.get(name, ()))
        ),
        [],
    )
    if len(bindings) != 1:
        return f"`{name}` is bound more than once"
    compiles = []
    for use in names.uses(bindings[0]):
        up = parent(context, use)
        if isinstance(up, ast.Attribute) and up.attr in SAME_MEANING:
            continue
        found = _compile_of(context, use, up)
        if found is None:
            return f"`{name}` is used at line {use.lineno} other than by compile()"
        compiles.append(found)
    return compiles


def _compile_of(context: Context, node: ast.expr, above: ast.AST | None) -> ast.Call | None:
    """The `*.compile(...)` call `node` is the optimizer argument of, if it is one."""
    if isinstance(above, ast.keyword) and above.arg == "optimizer":
        above = parent(context, above)
    elif not (isinstance(above, ast.Call) and above.args[:1] == [node]):
        return None
    if not (
        isinstance(above, ast.Call)
        and isinstance(above.func, ast.Attribute)
        and above.func.attr == "compile"
    ):
        return None
    if any(k.arg is None for k in above.keywords):
        return None  # **kwargs could hold auto_scale_loss
    return above


def fixed_message(name: str, scale: str, rewritten: FixedScale) -> str:
    """The fact of a fixed-scale call rewritten to loss_scale_factor (LSO001, LSO015); its help
    is FIXED_HELP, and --explain LSO015 says why."""
    compiles = f"; compile() given {NO_WRAP} ({rewritten.compiles}x)" if rewritten.compiles else ""
    return f"{name} with a fixed scale {scale} -> {one_line(rewritten.text)}{compiles}"


# The same numbers (loss times the scale, gradients divided by it, as TF 2.4's fixed mode), but
# a different class: what the rewrite leaves to check.
FIXED_HELP = (
    "it is no longer a LossScaleOptimizer: check isinstance(..., LossScaleOptimizer) on it or on "
    "model.optimizer elsewhere"
)
