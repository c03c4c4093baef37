"""Whether an expression of one module holds a tf.compat.v1.train optimizer or a Keras one.

TF 2.4-2.8's `enable_mixed_precision_graph_rewrite(opt)` (LSO008) did two different things by
the kind of `opt`, and the targets keep each under another name. `kind_of(context, node)` says
which kind `node` holds where the module decides it, following:

- a constructor call: `tf.compat.v1.train.AdamOptimizer(...)` and TF1's `tf.train.*Optimizer`
  (tf.compat.v1); `tf.keras.optimizers.SGD(...)` and its legacy/experimental homes,
  `tf.keras.optimizers.get(...)`, TensorFlow Addons' optimizers (Keras);
- a class defined in the module, by its bases (`class LAMB(tf.compat.v1.train.Optimizer)`);
- Horovod's `hvd.DistributedOptimizer(opt)`: horovod.tensorflow's keeps the kind of `opt`
  (it wraps a TF1 optimizer in a TF1 one and hands a Keras one to horovod.tensorflow.keras),
  horovod.tensorflow.keras's is Keras;
- a name, through every assignment the read may see (codemods/meaning/assignments.py): all
  must agree.

Anything else (a parameter, an attribute, a function of another module, a class of another
module) is not decided: the answer says why, in words for a finding's fact line (LSO008 then
writes the choice to be made at run time, except for a loss scale optimizer: `refused`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from codemods import table
from codemods.meaning.assignments import Reaching
from codemods.meaning.module import Context

V1 = "tf.compat.v1"
KERAS = "Keras"
_MAX_DEPTH = 16

_V1_CONSTRUCTOR = re.compile(r"^tensorflow(\.compat\.v1)?\.train\.\w*Optimizer$")
_V1_BASE = re.compile(r"^tensorflow(\.compat\.v1)?\.train\.Optimizer$")
_KERAS_HOMES = r"(tensorflow(\.compat\.v[12])?\.keras|tf_keras|keras)"
_KERAS_CONSTRUCTOR = re.compile(
    rf"^({_KERAS_HOMES}\.optimizers(\.legacy|\.experimental)?\.([A-Z]\w*|get)"
    r"|tensorflow_addons\.optimizers\.[A-Z]\w*)$"
)
_GRAPH_REWRITE = ".enable_mixed_precision_graph_rewrite"  # returns a loss scale optimizer
_HOROVOD_KEEPS_KIND = frozenset({"horovod.tensorflow.DistributedOptimizer"})
_HOROVOD_KERAS = frozenset(
    {"horovod.tensorflow.keras.DistributedOptimizer", "horovod.keras.DistributedOptimizer"}
)
_LOSS_SCALE_OPTIMIZERS = frozenset(
    {
        *table.OLD_LSO,
        *table.NEW_LSO,
        "tensorflow.train.experimental.MixedPrecisionLossScaleOptimizer",
    }
)


@dataclass(frozen=True)
class Kind:
    """`kind` (V1 or KERAS) where decided, with the construction that decides it (`evidence`,
    its first line); else kind None and `why` says what stops it, `refused` where that is a loss
    scale optimizer (which TF 2.4-2.8's function refused, whatever its kind)."""

    kind: str | None
    why: str = ""
    evidence: ast.AST | None = None
    refused: bool = False


def kind_of(context: Context, node: ast.expr) -> Kind:
    return _Kinds(context).expr(node, 0)


class _Kinds:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.reaching = Reaching(context)

    def expr(self, node: ast.expr, depth: int) -> Kind:
        if depth > _MAX_DEPTH:
            return Kind(None, "it is passed on too many times to follow")
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        if isinstance(node, ast.Name):
            return self.name(node, depth)
        written = _brief(self.context.source.segment(node))
        if isinstance(node, ast.Attribute):
            return Kind(None, f"`{written}` is an attribute, not followed")
        return Kind(None, f"`{written}` is not an optimizer the module builds")

    def name(self, node: ast.Name, depth: int) -> Kind:
        found = self.reaching.of(node)
        if not found:
            return Kind(None, f"`{node.id}` is not assigned in this module")
        kinds = []
        for statement, value, index in found:
            if isinstance(statement, ast.arg):
                owner = self._function_of(statement)
                return Kind(None, f"`{node.id}` is a parameter of {owner}()")
            if value is None or index != -1:
                return Kind(None, f"`{node.id}` is assigned where its value cannot be followed")
            kinds.append(self.expr(value, depth + 1))
        undecided = next((k for k in kinds if k.kind is None), None)
        if undecided is not None:
            return undecided
        if len({k.kind for k in kinds}) > 1:
            return Kind(None, f"`{node.id}` may hold a tf.compat.v1 or a Keras optimizer")
        return kinds[0]

    def call(self, call: ast.Call, depth: int) -> Kind:
        context = self.context
        qualified = context.qualified(call.func) or ""
        written = _brief(context.source.segment(call.func))
        if qualified in _LOSS_SCALE_OPTIMIZERS or qualified.endswith(_GRAPH_REWRITE):
            return Kind(
                None, f"`{written}(...)` is a loss scale optimizer, which it refused", refused=True
            )
        if _V1_CONSTRUCTOR.match(qualified):
            return Kind(V1, evidence=call)
        if _KERAS_CONSTRUCTOR.match(qualified) or qualified in _HOROVOD_KERAS:
            return Kind(KERAS, evidence=call)
        if qualified in _HOROVOD_KEEPS_KIND:
            inner = call.args[0] if call.args else _keyword(call, "optimizer")
            if inner is None:
                return Kind(None, f"`{written}(...)` is given no optimizer to keep the kind of")
            return self.expr(inner, depth + 1)
        if isinstance(call.func, ast.Name):
            defined = self._class(call.func)
            if defined is not None:
                return self.bases(defined, call, depth)
        return Kind(None, self._elsewhere(call.func, written, qualified))

    def bases(self, cls: ast.ClassDef, call: ast.Call, depth: int) -> Kind:
        for base in cls.bases:
            qualified = self.context.qualified(base) or ""
            if _V1_BASE.match(qualified) or _V1_CONSTRUCTOR.match(qualified):
                return Kind(V1, evidence=call)
            if _KERAS_CONSTRUCTOR.match(qualified) or qualified.endswith("OptimizerV2"):
                return Kind(KERAS, evidence=call)
            if isinstance(base, ast.Name) and depth < _MAX_DEPTH:
                defined = self._class(base)
                if defined is not None:
                    found = self.bases(defined, call, depth + 1)
                    if found.kind is not None:
                        return found
        return Kind(None, f"the bases of class {cls.name} are not optimizers the module knows")

    def _elsewhere(self, func: ast.expr, written: str, qualified: str) -> str:
        """Why a call's result is not decided: what its callee is."""
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if qualified and isinstance(root, ast.Name):
            return f"`{written}` is defined in another module"
        if isinstance(root, ast.Name):
            for statement, _, _ in self.reaching.of(root):
                if isinstance(statement, ast.arg):
                    return f"`{root.id}` is a parameter of {self._function_of(statement)}()"
        return f"`{written}(...)` returns what this module cannot see"

    def _class(self, name: ast.Name) -> ast.ClassDef | None:
        scope = self.context.names.scope_of_load.get(id(name))
        bindings = self.context.names.lookup(name.id, scope) if scope is not None else None
        if bindings and len(bindings) == 1 and isinstance(bindings[0].node, ast.ClassDef):
            return bindings[0].node
        return None

    def _function_of(self, argument: ast.arg) -> str:
        current = self.reaching.parent(argument)
        while current is not None and not isinstance(
            current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        ):
            current = self.reaching.parent(current)
        return getattr(current, "name", "lambda")


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _brief(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:37] + "..."
