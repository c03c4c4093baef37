"""What reaches a loss scale optimizer's apply_gradients: gradients of a scaled loss or not.

Keras 2's `LossScaleOptimizer.apply_gradients` applies the gradients it is given as they are;
Keras 3's divides them by the loss scale first. So the same loop means two things: code that
takes gradients of the *unscaled* loss ("wrap-only") trains on Keras 2 and trains at
gradients / 32768 on Keras 3. This module follows the gradients an `apply_gradients` call gets
back to where they were made, within one module:

- names (the assignment that reaches the read; tuple unpacking; `for` and comprehension
  targets), `zip`, `list`, subscripts, list comprehensions, arithmetic (accumulation);
- tapes: any `<tape>.gradient(loss, ...)` (tf.GradientTape, hvd.DistributedGradientTape) and
  `tf.gradients`; `get_unscaled_gradients`;
- clipping and all-reduce calls that keep the gradients' scale (`tf.clip_by_global_norm`, ...);
- functions of this module (their returns; `strategy.run(fn)`; `tf.function`), and parameters
  (what this module's calls pass).

Each answer is three-valued: proven of a scaled loss, proven of an unscaled loss (or unscaled
by the code), or unknown, with what was seen on the way. Only run on modules the prefilter kept.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from codemods.meaning.assignments import Reaching
from codemods.meaning.holders import methods_named
from codemods.meaning.module import Context
from codemods.meaning.values import own_returns
from codemods.table import Why

# SCALED: gradients of a scaled loss (Keras 3's apply_gradients unscales them: right).
# UNSCALED: gradients the code unscaled (get_unscaled_gradients of a scaled loss's gradients).
# UNSCALED_LOSS: gradients of a loss nobody scaled ("wrap-only").
# DIVIDED: get_unscaled_gradients of an unscaled loss's gradients (divided by the scale already).
# NEUTRAL: zeros, constants, None (an accumulator's start): no scale either way.
Verdict = Literal["scaled", "unscaled", "unscaled-loss", "divided", "neutral", "unknown"]
LossVerdict = Literal["scaled", "unscaled", "neutral", "unknown"]

SCALE_METHODS = frozenset({"get_scaled_loss", "scale_loss"})
# Calls whose first gradient argument comes back with the same scale (clipping, all-reduce).
_KEEPS_SCALE = frozenset(
    {"clip_by_global_norm", "clip_by_norm", "clip_by_value", "allreduce", "all_reduce"}
    | {"grouped_allreduce", "identity", "cast", "convert_to_tensor", "reduce", "reduce_mean"}
    | {"reduce_sum", "add_n", "stack", "where"}
)
_ZEROS = frozenset({"zeros_like", "zeros", "ones_like"})
_RUNS = frozenset({"run", "experimental_run_v2", "call_for_each_replica"})
_WRAPPERS = frozenset({"list", "tuple", "zip", "function", "enumerate"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MAX_DEPTH = 40


@dataclass(frozen=True)
class Path:
    """What a gradient expression holds and how it got there."""

    verdict: Verdict
    sources: tuple[ast.Call, ...] = ()  # the <tape>.gradient / tf.gradients calls it comes from
    straight: bool = True  # nothing between those calls and here but names, zip, list
    names: tuple[ast.stmt, ...] = ()  # the assignments it went through (for a rewrite)
    seen: str = ""  # for unknown: what the analysis could not follow
    losses: tuple[ast.expr, ...] = field(default=(), compare=False)  # the unscaled losses seen


def join(paths: Iterable[Path]) -> Path:
    """Several ways a value may arrive: one verdict if they agree (neutral ones aside)."""
    found = [p for p in paths if p.verdict != "neutral"]
    if not found:
        return Path("neutral")
    verdicts = {p.verdict for p in found}
    sources = tuple(s for p in found for s in p.sources)
    losses = tuple(x for p in found for x in p.losses)
    names = tuple(n for p in found for n in p.names)
    straight = len(found) == 1 and found[0].straight
    if len(verdicts) == 1:
        return Path(found[0].verdict, sources, straight, names, found[0].seen, losses)
    unknown = next((p for p in found if p.verdict == "unknown"), None)
    both = Why("run-time", "gradients of a scaled and of an unscaled loss both arrive")
    seen = unknown.seen if unknown else both
    return Path("unknown", sources, False, names, seen, losses)


class GradientFlow:
    """The gradient and loss analysis of one module (built once, cached per expression)."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.names = context.names
        self._grads: dict[tuple[int, int], Path] = {}
        self._losses: dict[int, LossVerdict] = {}
        self._active: set[tuple[int, int]] = set()
        self._reaching = Reaching(context)
        self._growth: dict[str, list[ast.Call]] | None = None

    # -- gradients ---------------------------------------------------------------------------------
    def gradients(self, node: ast.expr, index: int = -1, depth: int = 0) -> Path:
        """What `node` holds; `index`: only element `index` of the tuple it evaluates to."""
        key = (id(node), index)
        if key in self._grads:
            return self._grads[key]
        if depth > _MAX_DEPTH or key in self._active:
            return (
                Path("neutral")
                if key in self._active
                else Path("unknown", seen=Why("limit", "too deep"))
            )
        self._active.add(key)
        try:
            found = self._gradients(node, index, depth + 1)
        finally:
            self._active.discard(key)
        self._grads[key] = found
        return found

    def _gradients(self, node: ast.expr, index: int, depth: int) -> Path:
        if isinstance(node, ast.Constant):
            return Path("neutral")
        if isinstance(node, ast.Name):
            return self._name(node, index, depth)
        if isinstance(node, (ast.Tuple, ast.List)):
            if 0 <= index < len(node.elts):
                return self.gradients(node.elts[index], -1, depth)
            return join(self.gradients(e, -1, depth) for e in node.elts)
        if isinstance(node, ast.Subscript):
            at = node.slice
            if isinstance(at, ast.Constant) and isinstance(at.value, int):
                return self.gradients(node.value, at.value, depth)
            return self.gradients(node.value, -1, depth)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return bent(self.gradients(node.elt, -1, depth))
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, (ast.Mult, ast.Div)):  # g * factor, g / steps
                return bent(self.gradients(node.left, -1, depth))
            return bent(join(self.gradients(s, -1, depth) for s in (node.left, node.right)))
        if isinstance(node, ast.IfExp):
            return join(self.gradients(s, index, depth) for s in (node.body, node.orelse))
        if isinstance(node, ast.Call):
            return self._call(node, index, depth)
        return Path("unknown", seen=f"`{_short(node)}`")

    def _call(self, call: ast.Call, index: int, depth: int) -> Path:
        func = call.func
        method = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        args = [a for a in call.args if not isinstance(a, ast.Starred)]
        if (
            method == "gradient" and isinstance(func, ast.Attribute) and args
        ) or method == "gradients":
            return self._tape(call, args, depth)
        if method == "get_unscaled_gradients" and args:
            inner = self.gradients(args[0], -1, depth)
            verdict: Verdict = {"scaled": "unscaled", "unscaled-loss": "divided"}.get(
                inner.verdict, inner.verdict
            )  # type: ignore[assignment]
            return replace(inner, verdict=verdict, straight=False)
        if method in _ZEROS:
            return Path("neutral")
        if method in _WRAPPERS and isinstance(func, ast.Name) and args:
            return self.gradients(args[0], index if method != "zip" else -1, depth)
        if method in _KEEPS_SCALE and args:
            first = args[1] if method in ("reduce", "all_reduce") and len(args) > 1 else args[0]
            # clip_by_global_norm returns (clipped, norm): element 0 is the gradients.
            return bent(self.gradients(first, -1, depth))
        if method in _RUNS and args:
            return self._returned_by(args[0], index, depth, call)
        functions = self._functions(func)
        if functions:
            return join(self._returns(f, index, depth) for f in functions)
        return Path("unknown", seen=f"from `{_short(call)}`")

    def _tape(self, call: ast.Call, args: list[ast.expr], depth: int) -> Path:
        loss = args[0] if args else None
        keyword = next((k.value for k in call.keywords if k.arg == "target"), None)
        loss = keyword if loss is None else loss
        if loss is None:
            return Path("unknown", seen=f"`{_short(call)}` passes no loss")
        verdict = self.loss(loss, depth)
        if verdict == "scaled":
            return Path("scaled", (call,))
        if verdict == "unscaled":
            return Path("unscaled-loss", (call,), losses=(loss,))
        return Path("unknown", (call,), seen=f"the loss `{_short(loss)}` at line {call.lineno}")

    # -- names -------------------------------------------------------------------------------------
    def _name(self, name: ast.Name, index: int, depth: int) -> Path:
        paths = []
        for statement, value, at in self.reaching(name):
            if value is None:
                if isinstance(statement, ast.arg):
                    paths.append(self._parameter(statement, index, depth))
                else:
                    paths.append(Path("unknown", seen=f"`{name.id}` at line {name.lineno}"))
                continue
            found = self.gradients(value, at if at >= 0 else index, depth)
            if isinstance(statement, ast.Assign) and at < 0:
                found = replace(found, names=(*found.names, statement))
            else:
                found = bent(found)
            paths.append(found)
        if not paths:
            return Path("unknown", seen=f"`{name.id}` is not assigned in this module")
        # `grads.append(g)` / `grads.extend(gs)` in the same scope: what the list collects.
        scope = self.names.scope_of_load.get(id(name))
        for call in self._grown(name.id):
            if self.names.scope_of_load.get(id(call.func.value)) is scope:  # type: ignore[attr-defined]
                paths += [bent(self.gradients(a, -1, depth)) for a in call.args[:1]]
        return join(paths)

    def _grown(self, name: str) -> list[ast.Call]:
        if self._growth is None:
            self._growth = {}
            for call in self.names.calls:
                func = call.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("append", "extend")
                    and isinstance(func.value, ast.Name)
                ):
                    self._growth.setdefault(func.value.id, []).append(call)
        return self._growth.get(name, [])

    def reaching(self, name: ast.Name) -> list[tuple[ast.AST, ast.expr | None, int]]:
        return self._reaching.of(name)

    # -- functions and parameters ------------------------------------------------------------------
    def _functions(self, func: ast.expr) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """The functions of this module a call of `func` may run (`tf.function(f)` bound too)."""
        if isinstance(func, ast.Name):
            scope = self.names.scope_of_load.get(id(func))
            found = []
            for binding in self.names.lookup(func.id, scope) or () if scope else ():
                if isinstance(binding.node, _FUNCTIONS):
                    found.append(binding.node)
                elif _is_tf_function(binding.value):
                    assert isinstance(binding.value, ast.Call)
                    wrapped = binding.value.args[0]  # f = tf.function(g)
                    if isinstance(wrapped, ast.Name) and wrapped is not func:
                        found += self._functions(wrapped)
            return found
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            return list(methods_named(self.names, func.attr))
        return []

    def _returned_by(self, fn: ast.expr, index: int, depth: int, call: ast.Call) -> Path:
        functions = self._functions(fn)
        if not functions:
            return Path("unknown", seen=f"`{_short(call)}` runs a function not in this module")
        return join(self._returns(f, index, depth) for f in functions)

    def _returns(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, index: int, depth: int
    ) -> Path:
        values = [r.value for r in own_returns(function) if r.value is not None]
        if not values:
            return Path("unknown", seen=f"{function.name}() returns nothing the codemod can read")
        return bent(join(self.gradients(v, index, depth) for v in values), keep=True)

    def _parameter(self, parameter: ast.arg, index: int, depth: int) -> Path:
        function = self._function_of(parameter)
        passed = self._passed(parameter, function) if function is not None else []
        if not passed:
            where = f" of {function.name}()" if function is not None else ""
            return Path("unknown", seen=f"the parameter `{parameter.arg}`{where}, given by callers")
        return bent(join(self.gradients(v, index, depth) for v in passed))

    def _function_of(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        current = self._reaching.parent(node)
        while current is not None and not isinstance(current, _FUNCTIONS):
            current = self._reaching.parent(current)
        return current

    def _passed(
        self, parameter: ast.arg, function: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> list[ast.expr]:
        positional = [*function.args.posonlyargs, *function.args.args]
        position = positional.index(parameter) if parameter in positional else None
        passed = []
        for call in self.names.calls:
            if function not in self._functions(call.func):
                continue
            offset = 1 if isinstance(call.func, ast.Attribute) else 0
            keyword = next((k.value for k in call.keywords if k.arg == parameter.arg), None)
            if keyword is not None:
                passed.append(keyword)
            elif position is not None and 0 <= position - offset < len(call.args):
                argument = call.args[position - offset]
                if isinstance(argument, ast.Starred):
                    return []
                passed.append(argument)
            else:
                return []  # a call that does not pass it (a default, *args): not followed
        return passed

    # -- losses ------------------------------------------------------------------------------------
    def loss(self, node: ast.expr, depth: int = 0) -> LossVerdict:
        """Whether `node` is a loss scaled by a loss scale optimizer, proven either way."""
        if id(node) in self._losses:
            return self._losses[id(node)]
        self._losses[id(node)] = "neutral"  # a cycle adds nothing
        found = self._loss(node, depth + 1) if depth < _MAX_DEPTH else "unknown"
        self._losses[id(node)] = found
        return found

    def _loss(self, node: ast.expr, depth: int) -> LossVerdict:
        if isinstance(node, ast.Constant):
            return "neutral"
        if isinstance(node, ast.Name):
            reached = self.reaching(node)
            if not reached:
                return "unknown"
            verdicts = []
            for _statement, value, at in reached:
                if value is None:
                    return "unknown"  # a parameter: the loss comes from a caller
                element = value
                if at >= 0 and isinstance(value, (ast.Tuple, ast.List)) and at < len(value.elts):
                    element = value.elts[at]
                verdicts.append(self.loss(element, depth))
            return _join_losses(verdicts)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in SCALE_METHODS:
                return "scaled"
            functions = self._functions(func)
            if functions:
                values = [r.value for f in functions for r in own_returns(f) if r.value is not None]
                return _join_losses(self.loss(v, depth) for v in values) if values else "unknown"
            inputs = [*node.args, *(k.value for k in node.keywords)]
            if any(_names_an_optimizer(a) for a in inputs):
                return "unknown"  # it is handed the optimizer: it may scale
            if any(self.loss(a, depth) == "scaled" for a in inputs):
                return "scaled"
            return "unscaled"
        if isinstance(node, ast.BinOp):
            return _join_losses([self.loss(node.left, depth), self.loss(node.right, depth)])
        if isinstance(node, ast.UnaryOp):
            return self.loss(node.operand, depth)
        if isinstance(node, ast.Subscript):
            return self.loss(node.value, depth)
        if isinstance(node, (ast.Tuple, ast.List)):
            return _join_losses(self.loss(e, depth) for e in node.elts)
        if isinstance(node, ast.Dict):
            return _join_losses(self.loss(v, depth) for v in node.values)
        return "unknown"


def bent(path: Path, keep: bool = False) -> Path:
    """The same gradients after something that is not a plain name, zip or list (or, `keep`,
    after a function's return, which a rewrite must not cross either)."""
    return replace(path, straight=False) if path.verdict != "neutral" else path


def _join_losses(verdicts: Iterable[LossVerdict]) -> LossVerdict:
    found = {v for v in verdicts if v != "neutral"}
    if not found:
        return "neutral"
    if len(found) == 1:
        return found.pop()
    return "unknown"


def _is_tf_function(node: ast.expr | None) -> bool:
    """`tf.function(g)` (or `function(g)`, imported from tensorflow)."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "function") or (
        isinstance(func, ast.Name) and func.id == "function"
    )


def _names_an_optimizer(node: ast.expr) -> bool:
    text = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return "opt" in text.lower()


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 30 else text[:27] + "..."
