"""Where the value of an expression goes within its function: forward, the other way round from
codemods/meaning/gradients.py (for LSO011's explicit unscaling).

From one expression (`opt.get_unscaled_gradients(g)`), follow its value up through the
expressions that carry it (names, unpacking, `zip`, `list`, comprehensions and `for` targets,
arithmetic, subscripts, calls that return their gradients: clipping, casts, all-reduce) to
where it ends:

- an `apply_gradients` call: recorded (what the caller must rewrite);
- a reduction, a summary, a print, a test, an expression statement: read only, done;
- anything that may keep it or hand it on unseen (a return, a yield, an attribute or a subscript
  stored, a call of something not known to return a value of its own, a nested function): the
  answer is that reason, never a guess.

Only run on modules the prefilter kept.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from codemods.meaning.assignments import Reaching
from codemods.meaning.module import Context

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# Calls whose result carries the gradients they are given (element 0 of clip_by_global_norm's).
_CARRY = frozenset(
    {"clip_by_global_norm", "clip_by_norm", "clip_by_value", "identity", "cast", "where"}
    | {"convert_to_tensor", "allreduce", "grouped_allreduce", "all_reduce", "stop_gradient"}
    | {"list", "tuple", "zip", "enumerate", "reversed", "sorted", "scalar_mul", "multiply"}
    | {"divide", "add", "subtract", "add_n", "truediv", "negative"}
)
# Calls that read the gradients and return something else (a norm, a flag, a summary): done.
_READ = frozenset(
    {"global_norm", "norm", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_all"}
    | {"reduce_any", "is_finite", "is_nan", "is_inf", "histogram", "scalar", "print", "len"}
    | {"isinstance", "shape", "size", "rank", "reduce_euclidean_norm", "count_nonzero"}
    | {"check_numerics", "assert_all_finite", "type", "id", "repr", "str", "format"}
)


@dataclass
class Uses:
    """The apply_gradients calls the value reaches, or why it cannot be followed."""

    applies: list[ast.Call] = field(default_factory=list)
    blocked: str = ""


class GradientUses:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.reaching = Reaching(context)

    def of(self, start: ast.expr) -> Uses:
        found = Uses()
        owner = self._owner(start)
        seen: set[int] = set()
        pending: list[ast.expr] = [start]
        while pending and not found.blocked:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            found.blocked = self._up(node, owner, pending, found)
        return found

    def _up(self, node: ast.expr, owner: ast.AST, pending: list[ast.expr], found: Uses) -> str:
        """Follow `node`'s value one step up; '' where that is allowed, else the reason."""
        above = self.reaching.parent(node)
        line = f"line {node.lineno}"
        if isinstance(above, ast.keyword):
            node, above = above, self.reaching.parent(above)  # type: ignore[assignment]
        if isinstance(above, ast.Call):
            if node is above.func:
                return f"it is called at {line}"
            name = _called(above.func)
            if name == "apply_gradients":
                found.applies.append(above)
                return ""
            if name in _READ:
                return ""
            if name in _CARRY:
                pending.append(above)
                return ""
            return f"`{_short(above)}` ({line}) may keep them"
        if isinstance(above, (ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Starred, ast.Compare)):
            pending.append(above)
            return ""
        if isinstance(above, (ast.Tuple, ast.List, ast.BoolOp)):
            pending.append(above)
            return ""
        if isinstance(above, ast.Subscript):
            if node is above.value:
                pending.append(above)
            return ""
        if isinstance(above, ast.Attribute):
            method = self.reaching.parent(above)
            if isinstance(method, ast.Call) and method.func is above:
                pending.append(method)  # `g.numpy()`, `grads.append(x)`: still theirs
            else:
                pending.append(above)  # `g.shape`
            return ""
        if isinstance(above, ast.comprehension):
            return self._comprehension(above, pending)
        if isinstance(above, _COMPREHENSIONS):
            pending.append(above)
            return ""
        if isinstance(above, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            return self._assigned(above, node, owner, pending)
        if isinstance(above, (ast.For, ast.AsyncFor)) and node is above.iter:
            return self._bound(above, above.target, owner, pending)
        if isinstance(above, (ast.Expr, ast.If, ast.While, ast.Assert)):
            return ""
        if isinstance(above, (ast.Return, ast.Yield, ast.YieldFrom)):
            return f"they are returned at {line}"
        return f"`{_short(above) if above is not None else '?'}` ({line}) is not followed"

    def _comprehension(self, generator: ast.comprehension, pending: list[ast.expr]) -> str:
        comprehension = self.reaching.parent(generator)
        assert isinstance(comprehension, _COMPREHENSIONS)
        pending.append(comprehension)  # what it builds holds them
        bound = {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
        for load in ast.walk(comprehension):  # and what it does with each of them
            if (
                isinstance(load, ast.Name)
                and isinstance(load.ctx, ast.Load)
                and load.id in bound
                and not _inside(load, generator.iter)
            ):
                pending.append(load)
        return ""

    def _assigned(
        self, statement: ast.stmt, node: ast.expr, owner: ast.AST, pending: list[ast.expr]
    ) -> str:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]  # type: ignore[attr-defined]
        if (
            isinstance(node, ast.Call)
            and _called(node.func) == "clip_by_global_norm"
            and len(targets) == 1
            and isinstance(targets[0], (ast.Tuple, ast.List))
            and targets[0].elts
        ):
            targets = [targets[0].elts[0]]  # (clipped, norm): the norm is no gradient
        for target in targets:
            blocked = self._bound(statement, target, owner, pending)
            if blocked:
                return blocked
        return ""

    def _bound(
        self, statement: ast.AST, target: ast.expr, owner: ast.AST, pending: list[ast.expr]
    ) -> str:
        """The reads of the names `target` binds that see this binding."""
        for stored in ast.walk(target):
            refused = _unfollowed_store(stored, owner)
            if refused:
                return refused
            if not isinstance(stored, ast.Name):
                continue
            for load in self.context.names.loads:
                if load.id != stored.id or not _inside(load, owner):
                    continue
                reached = self.reaching.of(load)
                if not any(s is statement for s, _, _ in reached):
                    continue
                if self._owner(load) is not self._owner(statement):
                    return f"`{load.id}` is read in a nested function (line {load.lineno})"
                pending.append(load)
        return ""

    def _owner(self, node: ast.AST) -> ast.AST:
        current = self.reaching.parent(node)
        while current is not None and not isinstance(current, _FUNCTIONS):
            current = self.reaching.parent(current)
        return current if current is not None else self.context.tree


def _called(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    if isinstance(outer, ast.Module):
        return True
    start = (getattr(outer, "lineno", 0), getattr(outer, "col_offset", 0))
    end = (getattr(outer, "end_lineno", 0), getattr(outer, "end_col_offset", 0))
    return start <= (node.lineno, node.col_offset) < end  # type: ignore[attr-defined]


def _unfollowed_store(stored: ast.AST, owner: ast.AST) -> str:
    """Why a store of the gradients is not followed (an attribute or item, a global or nonlocal
    name of `owner`), or ''."""
    if isinstance(stored, (ast.Attribute, ast.Subscript)):
        return f"they are stored in `{_short(stored)}` (line {stored.lineno})"
    if isinstance(stored, ast.Name) and any(
        isinstance(n, (ast.Global, ast.Nonlocal)) and stored.id in n.names for n in ast.walk(owner)
    ):
        return f"`{stored.id}` is global or nonlocal (line {stored.lineno})"
    return ""


def _short(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 30 else text[:27] + "..."
