"""Where unscaled gradients go within the module, past their own function (for LSO011's
optimizer-wide rewrite, codemods/rules/_optimizer_wide.py).

codemods/meaning/gradient_uses.py follows a value within one function and stops at a return, an
object that may keep it, or a closure. This follows it further, as far as the module shows:

- a return from a private function (`_name`, or one nested in another function): to each of
  the module's calls of it (`f(...)`, `self._f(...)`, `strategy.run(f, ...)`), only the element
  of a returned tuple that holds them where the caller unpacks or indexes it, and skipping a
  call under `else` of the same side-effect-free test (`self.config["k"] == 1`) whose `if`
  holds the return;
- an object that keeps them (`acc(grads)`, `acc.add_gradients(grads)`: an accumulator), named
  by a local name that an assignment binds or by a private attribute (`self._acc`): every read
  of it in the module then carries them (`acc.gradients`, what its methods return);
- reads in nested functions and closures.

Anything else that could hand them on unseen (a public function's return, a parameter holding
the object, an attribute stored) is the answer, never a guess.
"""

from __future__ import annotations

import ast

from codemods.meaning.gradient_uses import (
    _CARRY,
    _READ,
    GradientUses,
    Uses,
    _called,
    _short,
    _unfollowed_store,
)
from codemods.meaning.holders import methods_named
from codemods.meaning.names import Analysis, Binding

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_RUNS = frozenset({"run", "experimental_run_v2", "call_for_each_replica"})
_PURE = (
    ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp,
    ast.Load, ast.cmpop, ast.boolop, ast.Not, ast.Tuple,
)  # fmt: skip
_LIBRARIES = frozenset({"tensorflow", "numpy", "horovod"})
_KEEPERS = frozenset({"assign", "collection", "scatter", "Variable"})  # tf.* that store a value
_REDUCE = frozenset({"reduce", "experimental_local_results"})
_KNOWN = _READ | _CARRY | {"apply_gradients"}  # GradientUses reads through these


class GradientReach(GradientUses):
    """GradientUses across the module's functions and the objects that keep gradients."""

    def __init__(self, context) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context)
        # A value followed is a pair: the node, and -1 (it holds them) or the element of the
        # tuple it is that holds them. `_up` sees the pair's element in `_at` and marks what it
        # adds to `pending` in `_next` (unmarked: -1).
        self._at = -1
        self._next: dict[int, int] = {}
        # id() of functions the gradients entered by a parameter: their returns go back to the
        # call that passed them (already followed), not to every call.
        self._entered: set[int] = set()
        self._start: ast.AST | None = None

    def of(self, start: ast.expr, ends: list[tuple[ast.AST, str]] | None = None) -> Uses:
        """Where the value of `start` goes; with `ends`, every place it is lost from sight is
        added there (node, why) and the rest followed, instead of stopping at the first."""
        found = Uses()
        self._start = self._owner(start)
        seen: set[tuple[int, int]] = set()
        work: list[tuple[ast.expr, int]] = [(start, -1)]
        while work and not found.blocked:
            node, self._at = work.pop()
            if (id(node), self._at) in seen:
                continue
            seen.add((id(node), self._at))
            added: list[ast.expr] = []
            self._next = {}
            found.blocked = self._up(node, self._owner(node), added, found)
            if found.blocked and ends is not None:
                ends.append((node, found.blocked))
                found.blocked = ""
            work += [(n, self._next.get(id(n), -1)) for n in added]
        return found

    def _up(self, node: ast.expr, owner: ast.AST, pending: list[ast.expr], found: Uses) -> str:
        above = self.reaching.parent(node)
        at = self._at
        if at >= 0 and isinstance(above, (ast.Subscript, ast.Assign)):
            return self._element(node, above, at, owner, pending)
        if isinstance(above, (ast.Tuple, ast.List)) and at < 0 and node in above.elts:
            self._next[id(above)] = above.elts.index(node)  # `return grads, loss`: element 0
            pending.append(above)
            return ""
        if isinstance(above, ast.Return):
            return self._returned(node, above, at, pending)
        if isinstance(above, ast.Lambda) and node is above.body:
            pending.append(above)  # what calling it returns: the lambda carries them
            return ""
        if isinstance(above, ast.withitem) and above.optional_vars is None:
            return ""  # `with tf.summary.record_if(flag):`
        call = self.reaching.parent(above) if isinstance(above, ast.keyword) else above
        if isinstance(call, ast.Call) and node is not call.func:
            said = self._call(call, node, pending)
            if said is not None:
                return said
        return super()._up(node, owner, pending, found)

    def _element(
        self, node: ast.expr, above: ast.AST, at: int, owner: ast.AST, pending: list[ast.expr]
    ) -> str:
        """`node` is a tuple whose element `at` holds them: `t[at]`, `a, b = t`, `x = t`."""
        if isinstance(above, ast.Subscript):
            index = above.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, int):  # t[-1]: not one
                if index.value == at:
                    pending.append(above)
                return ""
            pending.append(above)
            return ""
        assert isinstance(above, ast.Assign)
        targets = above.targets
        unpacked = len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List))
        starred = unpacked and any(isinstance(e, ast.Starred) for e in targets[0].elts)  # type: ignore[attr-defined]
        if unpacked and not starred and at < len(targets[0].elts):  # type: ignore[attr-defined]
            return self._bound(above, targets[0].elts[at], owner, pending)  # type: ignore[attr-defined]
        before = len(pending)
        blocked = self._assigned(above, node, owner, pending)
        for load in pending[before:]:
            self._next[id(load)] = at
        return blocked

    def _call(self, call: ast.Call, node: ast.expr, pending: list[ast.expr]) -> str | None:
        """A call given them: None where GradientUses knows it (clipping, reading, applying)."""
        name = _called(call.func)
        qualified = self.context.qualified(call.func) or ""
        if name in _REDUCE:
            pending.append(call)  # strategy.reduce(op, value): the value, reduced
            return ""
        if name == "map" and call.args[1:2] == [node]:
            functions = self._functions(call.args[0])  # map(self._f, grads): each goes into _f
            if not functions:
                return f"`{_short(call)}` (line {call.lineno}) may keep them"
            return self._into(call, node, functions, pending, position=0)
        if name in _KNOWN and node in call.args:
            return None
        functions = self._functions(call.func)
        if functions:
            return self._into(call, node, functions, pending)
        handed = [
            a for a in [*call.args, *(k.value for k in call.keywords)]
            if (isinstance(a, ast.Lambda) and a.args.args) or self._functions(a)
        ]  # fmt: skip
        if handed:  # tf.nest.map_structure(self._keep, grads): what the function does is unseen
            return f"`{_short(call)}` (line {call.lineno}) hands them to a function"
        if qualified.split(".")[0] in _LIBRARIES and not _KEEPERS.intersection(name.split("_")):
            pending.append(call)  # tf.equal(x, 0): a new value; TensorFlow keeps nothing
            return ""
        if node not in call.args:
            return None  # a keyword of a call not known: GradientUses says so
        return self._kept(call, pending)

    # -- calls of the module's functions -----------------------------------------------------------
    def _functions(self, func: ast.expr) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        if isinstance(func, ast.Attribute) and (_is_self(func.value) or _is_super(func.value)):
            return list(methods_named(self.context.names, func.attr))
        if isinstance(func, ast.Name):
            return [
                b.node
                for b in _bindings(self.context.names, func)
                if isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
        return []

    def _into(
        self,
        call: ast.Call,
        node: ast.expr,
        functions: list[ast.FunctionDef | ast.AsyncFunctionDef],
        pending: list[ast.expr],
        position: int = -1,
    ) -> str:
        """`f(grads)`, `self._m(grads)`: the reads of the parameter that gets them, and what the
        call returns (`position`: the parameter's, where the call is not `f`'s own)."""
        pending.append(call)
        keyword = next((k.arg for k in call.keywords if k.value is node), None)
        bound = isinstance(call.func if position < 0 else call.args[0], ast.Attribute)
        index = position if position >= 0 else call.args.index(node) if node in call.args else -1
        for function in functions:
            positional = [*function.args.posonlyargs, *function.args.args]
            offset = 1 if bound else 0
            if keyword is not None and position < 0:
                parameter = next((a for a in positional if a.arg == keyword), None)
            elif index >= 0 and index + offset < len(positional):
                parameter = positional[index + offset]
            else:
                parameter = None
            if parameter is None or any(isinstance(a, ast.Starred) for a in call.args):
                return f"`{_short(call)}` (line {call.lineno}) passes them to no parameter seen"
            self._entered.add(id(function))
            for load in self.context.names.loads:
                if load.id == parameter.arg and any(
                    s is parameter for s, _, _ in self.reaching.of(load)
                ):
                    pending.append(load)
        return ""

    def _bound(
        self, statement: ast.AST, target: ast.expr, owner: ast.AST, pending: list[ast.expr]
    ) -> str:
        """Reads of what `target` binds, closures included."""
        for stored in ast.walk(target):
            refused = _unfollowed_store(stored, self._owner(statement))
            if refused:
                return refused
            if not isinstance(stored, ast.Name):
                continue
            for load in self.context.names.loads:
                if load.id == stored.id and any(
                    s is statement for s, _, _ in self.reaching.of(load)
                ):
                    pending.append(load)
        return ""

    # -- returns -----------------------------------------------------------------------------------
    def _returned(
        self, node: ast.expr, statement: ast.Return, at: int, pending: list[ast.expr]
    ) -> str:
        line = f"line {statement.lineno}"
        value = statement.value
        if value is node:
            index = at
        else:
            return f"they are returned inside `{_short(value or statement)}` ({line})"
        function = self._owner(statement)
        if id(function) in self._entered and function is not self._start:
            return ""  # back to the call that passed them, followed already (_into)
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return f"they are returned at {line}"
        nested = isinstance(self._owner(function), _FUNCTIONS)
        if not (nested or function.name.startswith("_")):
            return f"returned by {function.name}() ({line}), which other modules may call"
        sites = self._calls_of(function)
        if isinstance(sites, str):
            return sites
        tests = _tests(self, statement, function)
        for site in sites:
            if not _contradicts(_tests(self, site, self._owner(site)), tests):
                self._next[id(site)] = index
                pending.append(site)
        return ""

    def _calls_of(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call] | str:
        """The module's calls that run `function` (their values are its returns)."""
        name = function.name
        method = isinstance(self.reaching.parent(function), ast.ClassDef)
        if method:
            refs: list[ast.expr] = [
                a for a in self.context.names.attributes
                if a.attr == name and isinstance(a.ctx, ast.Load)
            ]  # fmt: skip
            if not methods_named(self.context.names, name):
                return f"{name}() is not found as a method here"
        else:
            refs = [
                load for load in self.context.names.loads
                if load.id == name
                and any(b.node is function for b in _bindings(self.context.names, load))
            ]  # fmt: skip
        sites = []
        for ref in refs:
            holder = self.reaching.parent(ref)
            if (isinstance(holder, ast.Call) and holder.func is ref) or (
                isinstance(holder, ast.Call)
                and holder.args[:1] == [ref]
                and _called(holder.func) in _RUNS
            ):
                sites.append(holder)
            else:
                return f"{name}() is used as a value at line {ref.lineno}"
        if not sites:
            return f"{name}() is not called in this module"
        return sites

    # -- objects that keep them --------------------------------------------------------------------
    def _kept(self, call: ast.Call, pending: list[ast.expr]) -> str:
        """`acc(grads)` / `acc.add(grads)`: every read of `acc` carries them from then on."""
        line = f"line {call.lineno}"
        func = call.func
        if isinstance(func, ast.Attribute) and _is_self(func.value):
            if methods_named(self.context.names, func.attr):
                return f"they are passed to `{_short(func)}()` ({line})"
            holder: ast.expr = func  # self._acc(grads)
        elif isinstance(func, ast.Attribute):
            holder = func.value  # acc.add_gradients(grads), self._acc.add(grads)
        else:
            holder = func  # acc(grads)
        bindings = _bindings(self.context.names, holder) if isinstance(holder, ast.Name) else []
        if isinstance(holder, ast.Name) and (
            not bindings or any(b.is_import or b.statement is None for b in bindings)
        ):
            return f"`{_short(call)}` ({line}) may keep them"  # a function, or imported
        reads = self._reads_of(holder)
        if isinstance(reads, str):
            return f"`{_short(holder)}` keeps them ({line}) and {reads}"
        for read in reads:
            above = self.reaching.parent(read)
            if isinstance(above, ast.Attribute) and above.value is read:
                method = self.reaching.parent(above)
                is_call = isinstance(method, ast.Call) and method.func is above
                pending.append(method if is_call else above)  # type: ignore[arg-type]
            elif isinstance(above, ast.Call) and above.func is read:
                pending.append(above)
            else:
                return (
                    f"`{_short(holder)}`, which keeps them ({line}), is used at line {read.lineno}"
                )
        return ""

    def _reads_of(self, holder: ast.expr) -> list[ast.expr] | str:
        if isinstance(holder, ast.Attribute) and _is_self(holder.value):
            if not holder.attr.startswith("_"):
                return "is public: other modules may read it"
            stores = [
                self.reaching.parent(a) for a in self.context.names.attributes
                if a.attr == holder.attr and isinstance(a.ctx, ast.Store)
            ]  # fmt: skip
            if not stores or not all(_built(s) for s in stores):
                return "is not built here by a class call (`x = Accumulator()`)"
            return [
                a for a in self.context.names.attributes
                if a.attr == holder.attr and isinstance(a.ctx, ast.Load)
            ]  # fmt: skip
        if not isinstance(holder, ast.Name):
            return "is not a name or a private attribute"
        bindings = _bindings(self.context.names, holder)
        if any(isinstance(b.node, ast.arg) for b in bindings):
            return "is a parameter: its callers may read it"
        if not bindings or not all(_built(b.statement) for b in bindings):
            return "is not built here by a class call (`x = Accumulator()`)"
        return [
            load for load in self.context.names.loads
            if load.id == holder.id and _bindings(self.context.names, load) == bindings
        ]  # fmt: skip


def _bindings(names: Analysis, load: ast.Name) -> list[Binding]:
    scope = names.scope_of_load.get(id(load))
    return (names.lookup(load.id, scope) or []) if scope is not None else []


def _built(statement: ast.AST | None) -> bool:
    """`x = SomeClass(...)`: a new object, no other reference to it yet."""
    if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)):
        return False
    func = statement.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return len(statement.targets) == 1 and name[:1].isupper()


def _is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", "") == "super"


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _tests(reach: GradientReach, node: ast.AST, stop: ast.AST) -> set[tuple[str, bool]]:
    """The `if` tests around `node` within `stop`, each with the branch it is in."""
    found = set()
    child, current = node, reach.reaching.parent(node)
    while current is not None and current is not stop:
        if (
            isinstance(current, ast.If)
            and child is not current.test
            and all(isinstance(n, _PURE) for n in ast.walk(current.test))
        ):
            found.add((ast.dump(current.test), child in current.body))
        child, current = current, reach.reaching.parent(current)
    return found


def _contradicts(site: set[tuple[str, bool]], returned: set[tuple[str, bool]]) -> bool:
    return any((test, not branch) in returned for test, branch in site)
