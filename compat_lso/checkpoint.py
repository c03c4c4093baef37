"""Restore TensorFlow-format checkpoints written by Keras 2 on any backend, Keras 3 included.

`load_legacy_checkpoint(prefix, model=..., optimizer=...)` reads a checkpoint written with
`model.save_weights(..., save_format="tf")` or `tf.train.Checkpoint(model=..., optimizer=...)`
by Keras 2 (TF 2.4 to 2.15, tf_keras) or by TF 2.2 (whose LossScaleOptimizer kept its inner
optimizer under `base_optimizer`), and restores into today's objects:

- the model's weights, matched through the checkpoint's object graph (`layer_with_weights-N`,
  then attribute names such as `kernel`, `cell/kernel`, `moving_mean`);
- the loss-scale state (`current_loss_scale`, `good_steps`);
- the inner optimizer's `iterations`, learning rate variable and slots, each slot attached to
  the model variable the object graph says it belongs to.

Every value in the checkpoint ends up in exactly one of three lists: restored, skipped (not
asked for, or a hyperparameter the target keeps in its config), or unmapped. The whole plan,
shapes and dtypes checked, is made before anything is assigned; with `strict=True` (the
default) an unmapped value on either side (a checkpoint value with no target, or target state
that the checkpoint does not provide) raises `LegacyCheckpointError` listing all of them and
nothing is assigned.
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from compat_lso import _backend

__all__ = [
    "LegacyCheckpointError",
    "LegacyCheckpointRestore",
    "RestoredValue",
    "SkippedValue",
    "load_legacy_checkpoint",
]

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VARIABLE_VALUE = "VARIABLE_VALUE"

# Dependencies of a Keras 2 model that hold no model weights: the compiled optimizer (restored
# separately), traced functions, the `root` self-reference `save_weights` writes, and
# `layer-N`, which names the same layers as `layer_with_weights-N` (plus layers without weights).
_NOT_MODEL_WEIGHTS = re.compile(
    r"optimizer|root|save_counter|(train|test|predict)_(tf_)?function|layer-\d+"
)
_LAYER_WITH_WEIGHTS = re.compile(r"layer_with_weights-(\d+)")

# Optimizer state, by the name today's optimizers (Keras 2's new `optimizer.Optimizer` and
# Keras 3's) give the per-variable list, and the slot name Keras 2's legacy `OptimizerV2` (and
# TF 2.2) gave the same quantity. Keyed by the optimizer's class name; the same formula uses it in
# all three generations (e.g. RMSprop's `rms` is the moving average of squared gradients that the
# new RMSprop calls its velocity).
SLOT_TABLE: dict[str, dict[str, str]] = {
    "Adam": {"m": "_momentums", "v": "_velocities", "vhat": "_velocity_hats"},
    "AdamW": {"m": "_momentums", "v": "_velocities", "vhat": "_velocity_hats"},
    "SGD": {"momentum": "momentums"},
    "RMSprop": {"rms": "_velocities", "momentum": "_momentums", "mg": "_average_gradients"},
    "Adagrad": {"accumulator": "_accumulators"},
}


# -- The result -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RestoredValue:
    """A checkpoint value assigned to a variable."""

    key: str  # the checkpoint key
    target: str  # what it was assigned to, e.g. "model dense/kernel", "optimizer iterations"
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.key} -> {self.target} {list(self.shape)}"


@dataclasses.dataclass(frozen=True)
class SkippedValue:
    """A checkpoint value not restored, or target state not found in the checkpoint."""

    key: str  # the checkpoint key, or "(target) <what>" for state missing from the checkpoint
    reason: str

    def __str__(self) -> str:
        return f"{self.key}: {self.reason}"


@dataclasses.dataclass(frozen=True)
class LegacyCheckpointRestore:
    """What `load_legacy_checkpoint` did.

    `restored`: values assigned. `skipped`: values deliberately left alone (not asked for, or a
    hyperparameter the target optimizer keeps in its config). `unmapped`: values that should have
    been restored and could not be, in either direction; non-empty only with `strict=False`.
    """

    prefix: str
    layout: str
    restored: tuple[RestoredValue, ...]
    skipped: tuple[SkippedValue, ...]
    unmapped: tuple[SkippedValue, ...]

    @property
    def complete(self) -> bool:
        return not self.unmapped

    def __str__(self) -> str:
        lines = [
            f"Restored {len(self.restored)} values from {self.prefix} ({self.layout}); "
            f"{len(self.skipped)} skipped, {len(self.unmapped)} unmapped."
        ]
        for title, items in (
            ("Restored", self.restored),
            ("Skipped", self.skipped),
            ("Unmapped (NOT restored)", self.unmapped),
        ):
            if items:
                lines.append(f"{title}:")
                lines.extend(f"  {item}" for item in items)
        return "\n".join(lines)


class LegacyCheckpointError(ValueError):
    """The checkpoint does not map completely onto the model and optimizer; nothing was assigned."""

    def __init__(self, prefix: str, unmapped: Iterable[SkippedValue]) -> None:
        self.prefix = prefix
        self.unmapped = tuple(unmapped)
        lines = [
            f"Cannot restore {prefix}: {len(self.unmapped)} value(s) do not map; nothing was "
            "restored. Pass strict=False to restore what maps and get this list back in the "
            "result's `unmapped`."
        ]
        lines.extend(f"  {item}" for item in self.unmapped)
        super().__init__("\n".join(lines))


# -- The checkpoint side ----------------------------------------------------------------


class _ObjectGraph:
    """The checkpoint's object graph: which node is which variable, and how they connect."""

    def __init__(self, reader: Any, prefix: str) -> None:
        if not reader.has_tensor(_OBJECT_GRAPH_KEY):
            raise ValueError(
                f"{prefix} is a name-based (TF 1) checkpoint without an object graph; "
                "load_legacy_checkpoint reads object-based checkpoints (model.save_weights in "
                "TensorFlow format, tf.train.Checkpoint)."
            )
        proto = trackable_object_graph_pb2.TrackableObjectGraph()
        proto.ParseFromString(reader.get_tensor(_OBJECT_GRAPH_KEY))
        self.nodes = proto.nodes
        self.shapes = reader.get_variable_to_shape_map()
        self.dtypes = reader.get_variable_to_dtype_map()
        self.reader = reader

    def children(self, node: int) -> list[tuple[str, int]]:
        return [(c.local_name, c.node_id) for c in self.nodes[node].children]

    def child(self, node: int | None, name: str) -> int | None:
        if node is None:
            return None
        for local_name, child in self.children(node):
            if local_name == name:
                return child
        return None

    def value_key(self, node: int) -> str | None:
        for attribute in self.nodes[node].attributes:
            if attribute.name == _VARIABLE_VALUE:
                return str(attribute.checkpoint_key)
        return None

    def full_name(self, node: int) -> str:
        for attribute in self.nodes[node].attributes:
            if attribute.name == _VARIABLE_VALUE:
                return str(attribute.full_name)
        return ""

    def has_content(self, node: int) -> bool:
        proto = self.nodes[node]
        return bool(proto.children or proto.attributes or proto.slot_variables)

    def variable_nodes(self) -> Iterator[int]:
        for node in range(len(self.nodes)):
            if self.value_key(node) is not None:
                yield node

    def other_attributes(self) -> Iterator[str]:
        for proto in self.nodes:
            for attribute in proto.attributes:
                if attribute.name != _VARIABLE_VALUE:
                    yield attribute.checkpoint_key

    def walk(self, start: int, skip: re.Pattern[str] | None = None) -> dict[int, tuple[str, ...]]:
        """Variable nodes under `start`, each with its shortest path (as TensorFlow names it)."""
        paths: dict[int, tuple[str, ...]] = {}
        seen = {start}
        queue: list[tuple[int, tuple[str, ...]]] = [(start, ())]
        while queue:
            node, path = queue.pop(0)
            for name, child in self.children(node):
                if child in seen or (skip is not None and skip.fullmatch(name)):
                    continue
                seen.add(child)
                if self.value_key(child) is not None:
                    paths[child] = (*path, name)
                queue.append((child, (*path, name)))
        return paths


@dataclasses.dataclass
class _CheckpointOptimizer:
    layout: str
    node: int | None  # the loss scale optimizer (or plain optimizer) node
    inner: int | None  # the node holding the inner optimizer's variables
    iterations: int | None
    learning_rate: int | None
    current_loss_scale: int | None
    good_steps: int | None
    hyperparameters: dict[str, int]  # legacy: beta_1, decay, ... -> node
    # (state name as today's optimizers name it, or None where it has no counterpart; the slot's
    # name in the checkpoint; the checkpoint node of its model variable, None if not found;
    # the slot's node).
    slots: list[tuple[str | None, str, int | None, int]]
    other: dict[int, str]  # variable nodes under the optimizer that nothing explains -> why


def _parse_optimizer(
    graph: _ObjectGraph,
    node: int | None,
    model_vars_by_full_name: dict[str, int],
    target_class: str | None,
) -> _CheckpointOptimizer:
    parsed = _CheckpointOptimizer("no optimizer", node, None, None, None, None, None, {}, [], {})
    if node is None:
        return parsed
    base = graph.child(node, "base_optimizer")
    if base is not None and graph.has_content(base):
        parsed.layout = "TF 2.2 layout (optimizer/base_optimizer/...)"
        inner = base
    else:
        parsed.layout = "Keras 2 layout (TF 2.4-2.15, tf_keras)"
        inner = node
    parsed.inner = inner
    loss_scale = graph.child(node, "loss_scale")
    parsed.current_loss_scale = graph.child(loss_scale, "current_loss_scale")
    parsed.good_steps = graph.child(loss_scale, "good_steps")
    legacy_names = SLOT_TABLE.get(target_class or "", {})
    explained: set[int] = set()
    for n in (parsed.current_loss_scale, parsed.good_steps):
        if n is not None:
            explained.add(n)

    for name, child in graph.children(inner):
        if name in ("loss_scale", "base_optimizer", "_index_dict", "_variables"):
            continue
        if name in ("iter", "_iterations"):
            parsed.iterations = child
        elif name in ("learning_rate", "_learning_rate", "lr"):
            if graph.value_key(child) is not None:
                parsed.learning_rate = child
        elif graph.value_key(child) is not None:
            parsed.hyperparameters[name] = child  # a legacy OptimizerV2 hyperparameter
        elif graph.children(child) and all(n.isdigit() for n, _ in graph.children(child)):
            # A per-variable state list of a new (Keras 2 `optimizer.Optimizer`) optimizer. Its
            # elements are named "<prefix>/<model variable name>" (e.g. "m/dense/kernel").
            for _, element in graph.children(child):
                if graph.value_key(element) is None:
                    continue
                _, _, variable_name = graph.full_name(element).partition("/")
                variable = model_vars_by_full_name.get(variable_name)
                state = name if name in set(legacy_names.values()) else None
                parsed.slots.append((state, name, variable, element))
                explained.add(element)
        explained.add(child)
    for slot in graph.nodes[inner].slot_variables:
        state = legacy_names.get(slot.slot_name)
        parsed.slots.append(
            (state, slot.slot_name, slot.original_variable_node_id, slot.slot_variable_node_id)
        )
    for n in (parsed.iterations, parsed.learning_rate, *parsed.hyperparameters.values()):
        if n is not None:
            explained.add(n)
    for n, path in graph.walk(node, skip=None).items():
        if n not in explained:
            parsed.other[n] = "optimizer/" + "/".join(path)
    return parsed


# -- The target side --------------------------------------------------------------------


def _is_variable(value: Any) -> bool:
    return (
        hasattr(value, "assign")
        and hasattr(value, "shape")
        and hasattr(value, "dtype")
        and not isinstance(value, (tf.Tensor, np.ndarray))
    )


def _short_name(variable: Any) -> str:
    return str(variable.name).split(":")[0].rsplit("/", 1)[-1]


def _describe(variable: Any) -> str:
    return str(getattr(variable, "path", None) or variable.name).split(":")[0]


def _weighted_layers(obj: Any) -> list[Any] | None:
    layers = getattr(obj, "layers", None)
    if not isinstance(layers, (list, tuple)):
        return None
    return [layer for layer in layers if layer.weights]


def _resolve(model: Any, path: tuple[str, ...]) -> tuple[Any, str | None]:
    """The target variable at a checkpoint path, or None and why not."""
    obj = model
    for i, name in enumerate(path):
        last = i == len(path) - 1
        match = _LAYER_WITH_WEIGHTS.fullmatch(name)
        if match:
            layers = _weighted_layers(obj)
            index = int(match.group(1))
            if layers is None:
                return None, f"{'/'.join(path[:i]) or 'the model'} has no layers"
            if index >= len(layers):
                return None, f"the target has {len(layers)} layers with weights, not {index + 1}"
            obj = layers[index]
            continue
        if isinstance(obj, (list, tuple)) and name.isdigit() and int(name) < len(obj):
            obj = obj[int(name)]
            continue
        found = getattr(obj, name, None) if not name.startswith("__") else None
        if last and not _is_variable(found):
            # Attribute names a variable was tracked under usually are its name; else search.
            candidates = [w for w in getattr(obj, "weights", []) if _short_name(w) == name]
            if len(candidates) > 1:
                return None, f"{len(candidates)} target variables are named {name!r}"
            found = candidates[0] if candidates else None
        if found is None:
            return None, f"the target has no {'/'.join(path[: i + 1])}"
        obj = found
    if not _is_variable(obj):
        return None, f"the target's {'/'.join(path)} is {type(obj).__name__}, not a variable"
    return obj, None


@dataclasses.dataclass
class _TargetOptimizer:
    optimizer: Any
    inner: Any
    kind: str  # "keras3", "keras2-new", "keras2-legacy"
    scale: Any  # the dynamic loss scale variable, or None
    counter: Any  # its good-steps counter, or None

    @property
    def class_name(self) -> str:
        return type(self.inner).__name__

    def iterations(self) -> Any:
        return self.inner.iterations

    def learning_rate(self) -> Any:
        if self.kind == "keras2-legacy":
            value = self.inner._hyper.get("learning_rate")
        else:
            value = getattr(self.inner, "_learning_rate", None)
        return value if _is_variable(value) else None

    def hyperparameter(self, name: str) -> Any:
        """A legacy hyperparameter variable, or the Python value the target keeps instead."""
        if self.kind == "keras2-legacy":
            return self.inner._hyper.get(name)
        return getattr(self.inner, name, None)

    def slot(self, state: str, variable: Any) -> tuple[Any, str | None]:
        if self.kind == "keras2-legacy":
            names = {v: k for k, v in SLOT_TABLE.get(self.class_name, {}).items()}
            slot_name = names.get(state)
            if slot_name is None or slot_name not in self.inner.get_slot_names():
                return None, f"{self.class_name} has no {state!r} slot"
            try:
                return self.inner.get_slot(variable, slot_name), None
            except KeyError:
                return None, f"the optimizer has no {slot_name!r} slot for {_describe(variable)}"
        states = getattr(self.inner, state, None)
        if not states:
            return None, f"{self.class_name} keeps no {state!r} state (check its arguments)"
        try:
            if self.kind == "keras3":
                index = self.inner._get_variable_index(variable)
            else:
                index = self.inner._index_dict[self.inner._var_key(variable)]
        except KeyError:
            return None, f"the optimizer was not built for {_describe(variable)}"
        return states[index], None

    def variables(self) -> list[Any]:
        """Every variable of the inner optimizer (iterations, learning rate, slots)."""
        if self.kind == "keras2-legacy":
            return list(self.inner.weights)
        return list(self.inner.variables)


def _target_optimizer(optimizer: Any, model: Any) -> _TargetOptimizer:
    implementation = _backend.implementation()
    keras_3 = _backend.keras_version() >= _backend.KERAS_3
    native = implementation.NativeLossScaleOptimizer
    is_lso = isinstance(optimizer, native)
    inner = optimizer.inner_optimizer if is_lso else optimizer
    if not isinstance(inner, implementation.OPTIMIZER_TYPES):
        raise TypeError(
            f"optimizer must be a {_backend.keras_package().__name__} optimizer or loss scale "
            f"optimizer, got {type(optimizer).__name__}."
        )
    if keras_3:
        kind = "keras3"
    else:
        kind = (
            "keras2-legacy" if isinstance(inner, implementation.LegacyOptimizer) else "keras2-new"
        )
    var_list = list(model.trainable_variables) if model is not None else None
    _build(optimizer, inner, kind, var_list)

    scale = counter = None
    if is_lso:
        if keras_3:
            if getattr(optimizer, "dynamic", True):
                if not hasattr(optimizer, "dynamic_scale"):
                    raise ValueError(
                        f"{type(optimizer).__name__} is not built, so its loss scale variables do "
                        "not exist yet: pass model= (it is built for model.trainable_variables) "
                        "or build it first."
                    )
                scale, counter = optimizer.dynamic_scale, optimizer.step_counter
        elif optimizer.dynamic:
            scale, counter = optimizer._loss_scale.current_loss_scale, optimizer._loss_scale.counter
    return _TargetOptimizer(optimizer, inner, kind, scale, counter)


def _build(optimizer: Any, inner: Any, kind: str, var_list: list[Any] | None) -> None:
    """Create the optimizer's variables for `var_list`, as its first step would."""
    if var_list is None:
        if kind == "keras2-legacy":  # what needs no variable list: iterations, hyperparameters
            inner._create_hypers()
            inner.iterations  # noqa: B018 (created on first access)
        return
    if kind == "keras3":
        if not optimizer.built:
            optimizer.build(var_list)
            optimizer.built = True
        elif not inner.built:
            inner.build(var_list)
    elif kind == "keras2-new":
        if not getattr(inner, "_built", False):
            inner.build(var_list)
    else:
        inner._create_all_weights(var_list)


# -- The plan ---------------------------------------------------------------------------


@dataclasses.dataclass
class _Plan:
    assignments: list[tuple[Any, np.ndarray, RestoredValue]] = dataclasses.field(
        default_factory=list
    )
    skipped: list[SkippedValue] = dataclasses.field(default_factory=list)
    unmapped: list[SkippedValue] = dataclasses.field(default_factory=list)
    accounted: set[int] = dataclasses.field(default_factory=set)  # checkpoint nodes
    covered: set[int] = dataclasses.field(default_factory=set)  # id() of target variables

    def skip(self, key: str, reason: str, node: int | None = None) -> None:
        self.skipped.append(SkippedValue(key, reason))
        if node is not None:
            self.accounted.add(node)

    def fail(self, key: str, reason: str, node: int | None = None) -> None:
        self.unmapped.append(SkippedValue(key, reason))
        if node is not None:
            self.accounted.add(node)


def _convert(graph: _ObjectGraph, key: str, variable: Any) -> tuple[np.ndarray | None, str | None]:
    """The checkpoint value at `key` as `variable` holds it, or None and why it does not fit."""
    shape = tuple(graph.shapes[key])
    target_shape = tuple(int(d) for d in variable.shape)
    if shape != target_shape:
        return None, f"shape {list(shape)} in the checkpoint, {list(target_shape)} in the target"
    source = tf.as_dtype(graph.dtypes[key])
    target = tf.as_dtype(variable.dtype)
    value = np.asarray(graph.reader.get_tensor(key))
    if source == target:
        return value, None
    if source.is_integer and target.is_integer:
        info = np.iinfo(target.as_numpy_dtype)
        if value.size and (value.min() < info.min or value.max() > info.max):
            return None, f"value {value} does not fit the target's {target.name}"
        return value.astype(target.as_numpy_dtype), None
    return None, f"dtype {source.name} in the checkpoint, {target.name} in the target"


def _assign(plan: _Plan, graph: _ObjectGraph, node: int, variable: Any, target: str) -> None:
    key = graph.value_key(node)
    assert key is not None
    plan.accounted.add(node)
    plan.covered.add(id(variable))
    value, problem = _convert(graph, key, variable)
    if value is None:
        plan.fail(key, f"does not fit {target}: {problem}")
        return
    plan.assignments.append((variable, value, RestoredValue(key, target, tuple(value.shape))))


def _plan_model(
    plan: _Plan, graph: _ObjectGraph, model_vars: dict[int, tuple[str, ...]], model: Any
) -> dict[int, Any]:
    """Checkpoint model variable node -> target variable, for the variables that map."""
    matched: dict[int, Any] = {}
    for node, path in model_vars.items():
        key = graph.value_key(node)
        assert key is not None
        if model is None:
            plan.skip(key, "model weight; not restored (model=None)", node)
            continue
        variable, problem = _resolve(model, path)
        if variable is None:
            plan.fail(key, f"model weight {'/'.join(path)}: {problem}", node)
            continue
        matched[node] = variable
        _assign(plan, graph, node, variable, f"model {_describe(variable)}")
    if model is not None:
        for variable in model.weights:
            if id(variable) not in plan.covered:
                plan.fail(f"(target) model {_describe(variable)}", "not in the checkpoint")
    return matched


def _plan_optimizer(
    plan: _Plan,
    graph: _ObjectGraph,
    parsed: _CheckpointOptimizer,
    target: _TargetOptimizer | None,
    *,
    matched_model_vars: dict[int, Any],
    model_given: bool,
) -> None:
    if target is None:
        optimizer_nodes = [
            parsed.iterations,
            parsed.learning_rate,
            parsed.current_loss_scale,
            parsed.good_steps,
            *parsed.hyperparameters.values(),
            *(slot for _, _, _, slot in parsed.slots),
            *parsed.other,
        ]
        for node in optimizer_nodes:
            if node is not None:
                reason = "optimizer state; not restored (optimizer=None)"
                plan.skip(graph.value_key(node) or "", reason, node)
        return
    _plan_loss_scale(plan, graph, parsed, target)
    if parsed.iterations is None:
        plan.fail("(target) optimizer iterations", "not in the checkpoint")
    else:
        _assign(plan, graph, parsed.iterations, target.iterations(), "optimizer iterations")
    _plan_hyperparameters(plan, graph, parsed, target)
    for slot in parsed.slots:
        _plan_slot(
            plan,
            graph,
            slot,
            target,
            matched_model_vars=matched_model_vars,
            model_given=model_given,
        )
    for node, path in parsed.other.items():
        plan.fail(graph.value_key(node) or path, f"optimizer state {path} has no counterpart", node)
    _plan_target_state_left(plan, target)


def _plan_loss_scale(
    plan: _Plan, graph: _ObjectGraph, parsed: _CheckpointOptimizer, target: _TargetOptimizer
) -> None:
    if parsed.current_loss_scale is None and parsed.good_steps is None:
        if target.scale is not None:
            why = (
                "the checkpoint has no loss scale state (written with a fixed loss scale or "
                "without a LossScaleOptimizer); the target's dynamic loss scale would keep its "
                "initial value"
            )
            plan.fail("(target) optimizer loss scale", why)
            plan.fail("(target) optimizer loss scale good steps", why)
        return
    for node, variable, what in (
        (parsed.current_loss_scale, target.scale, "loss scale"),
        (parsed.good_steps, target.counter, "loss scale good steps"),
    ):
        if variable is None:
            if node is not None:
                why = (
                    "the checkpoint has a dynamic loss scale; the target optimizer has none "
                    "(use a LossScaleOptimizer with dynamic=True)"
                )
                plan.fail(graph.value_key(node) or "", why, node)
        elif node is None:
            plan.fail(f"(target) optimizer {what}", "not in the checkpoint")
        else:
            _assign(plan, graph, node, variable, f"optimizer {what} ({_describe(variable)})")


def _plan_hyperparameters(
    plan: _Plan, graph: _ObjectGraph, parsed: _CheckpointOptimizer, target: _TargetOptimizer
) -> None:
    """The learning rate, and a legacy optimizer's other hyperparameter variables."""
    learning_rate = target.learning_rate()
    if parsed.learning_rate is not None:
        key = graph.value_key(parsed.learning_rate) or ""
        if learning_rate is None:
            kept = type(target.inner.learning_rate).__name__
            reason = f"learning rate; the target's is a {kept}, not a variable: kept"
            plan.skip(key, reason, parsed.learning_rate)
        else:
            _assign(plan, graph, parsed.learning_rate, learning_rate, "optimizer learning_rate")
    for name, node in parsed.hyperparameters.items():
        key = graph.value_key(node) or ""
        kept = target.hyperparameter(name)
        if _is_variable(kept):
            _assign(plan, graph, node, kept, f"optimizer {name}")
            continue
        saved = _number(graph.reader.get_tensor(key))
        if kept is None:
            note = f"{target.class_name} has no {name!r}"
        elif not isinstance(kept, (int, float, np.number)):
            note = f"the target's is {type(kept).__name__}"
        elif _number(kept) == saved:
            note = "the target's is equal"
        else:
            note = f"the target's DIFFERS: {_number(kept)}"
        plan.skip(key, f"hyperparameter {name}={saved}, the target keeps its own; {note}", node)


def _plan_slot(
    plan: _Plan,
    graph: _ObjectGraph,
    slot: tuple[str | None, str, int | None, int],
    target: _TargetOptimizer,
    *,
    matched_model_vars: dict[int, Any],
    model_given: bool,
) -> None:
    """One slot, attached to the model variable the checkpoint says it belongs to."""
    state, raw_name, variable_node, node = slot
    key = graph.value_key(node) or ""
    if state is None:
        if target.class_name in SLOT_TABLE:
            reason = f"slot {raw_name!r} has no counterpart in {target.class_name}"
        else:
            known = ", ".join(sorted(SLOT_TABLE))
            reason = f"no slot mapping for {target.class_name} (known: {known})"
        plan.fail(key, reason, node)
        return
    if not model_given:
        plan.fail(key, f"slot {raw_name!r}: pass model= to attach slots to its variables", node)
        return
    if variable_node is None:
        reason = (
            f"slot {raw_name!r} ({graph.full_name(node)}): no single model variable in the "
            "checkpoint has that name"
        )
        plan.fail(key, reason, node)
        return
    model_variable = matched_model_vars.get(variable_node)
    if model_variable is None:
        variable_key = graph.value_key(variable_node)
        plan.fail(key, f"slot {raw_name!r} of {variable_key}, which did not map", node)
        return
    target_slot, problem = target.slot(state, model_variable)
    if target_slot is None:
        plan.fail(key, f"slot {raw_name!r}: {problem}", node)
        return
    _assign(plan, graph, node, target_slot, f"optimizer {state} of {_describe(model_variable)}")


def _plan_target_state_left(plan: _Plan, target: _TargetOptimizer) -> None:
    """Target optimizer variables the checkpoint did not provide."""
    learning_rate = target.learning_rate()
    hyperparameters = {id(learning_rate)} if learning_rate is not None else set()
    if target.kind == "keras2-legacy":
        hyperparameters |= {id(v) for v in target.inner._hyper.values() if _is_variable(v)}
    for variable in target.variables():
        if id(variable) in plan.covered:
            continue
        what = f"(target) optimizer {_describe(variable)}"
        if id(variable) in hyperparameters:
            plan.skip(what, "hyperparameter not in the checkpoint; kept")
        else:
            plan.fail(what, "not in the checkpoint")


def _number(value: Any) -> str:
    """A float32 hyperparameter as its shortest round-tripping decimal."""
    return str(np.float32(value)) if np.ndim(value) == 0 else str(value)


def load_legacy_checkpoint(
    prefix: str | os.PathLike[str],
    *,
    model: Any = None,
    optimizer: Any = None,
    strict: bool = True,
) -> LegacyCheckpointRestore:
    """Restore a Keras 2 TensorFlow-format checkpoint into `model` and/or `optimizer`.

    `prefix` is what was passed to `model.save_weights` / `Checkpoint.write` (or a directory
    with a `checkpoint` index file). `optimizer` is a LossScaleOptimizer (compat_lso's or the
    backend's own) or a plain optimizer; an unbuilt optimizer is built for
    `model.trainable_variables` first, as its first step would. Slots need `model`.

    With `strict=True`, raises `LegacyCheckpointError` listing every value that does not map,
    before assigning anything. With `strict=False`, restores what maps, warns, and lists the
    rest in the result's `unmapped`. Returns a `LegacyCheckpointRestore`.
    """
    if model is None and optimizer is None:
        raise ValueError("load_legacy_checkpoint needs model=, optimizer=, or both.")
    path = os.fspath(prefix)
    if os.path.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise ValueError(
                f"{path} is a directory without a `checkpoint` index file; pass the checkpoint "
                "prefix."
            )
        path = latest
    try:
        reader = tf.train.load_checkpoint(path)
    except (
        tf.errors.NotFoundError,
        tf.errors.DataLossError,
        tf.errors.InvalidArgumentError,
    ) as error:
        raise ValueError(
            f"{path} is not a TensorFlow-format checkpoint prefix (for {path}.index and "
            f"{path}.data-*); an HDF5 (.h5) weights file is read by model.load_weights. "
            f"TensorFlow said: {error.message}"
        ) from error
    graph = _ObjectGraph(reader, path)
    if model is not None and not model.built:
        raise ValueError(
            "The model is not built: call it on data, or give it an Input, before restoring."
        )

    # Where the model and optimizer are: model.save_weights makes the model the root,
    # tf.train.Checkpoint(model=..., optimizer=...) names them.
    model_node = graph.child(0, "model")
    if model_node is None and any(
        not re.fullmatch(r"optimizer|save_counter|root", name) for name, _ in graph.children(0)
    ):
        model_node = 0
    optimizer_node = graph.child(0, "optimizer")
    if optimizer_node is None and model_node is not None:
        optimizer_node = graph.child(model_node, "optimizer")

    model_vars = graph.walk(model_node, skip=_NOT_MODEL_WEIGHTS) if model_node is not None else {}
    # New optimizers name each slot after its variable; a name two variables share maps to neither.
    full_names = [graph.full_name(n) for n in model_vars]
    by_full_name = {
        name: n
        for name, n in zip(full_names, model_vars, strict=True)
        if full_names.count(name) == 1
    }
    target = _target_optimizer(optimizer, model) if optimizer is not None else None
    target_class = target.class_name if target is not None else None
    parsed = _parse_optimizer(graph, optimizer_node, by_full_name, target_class)

    plan = _Plan()
    if model is not None and model_node is None:
        plan.fail("(target) model", "the checkpoint has no model")
    matched = _plan_model(plan, graph, model_vars, model)
    if optimizer is not None and optimizer_node is None:
        plan.fail("(target) optimizer", "the checkpoint has no optimizer")
    else:
        _plan_optimizer(
            plan, graph, parsed, target, matched_model_vars=matched, model_given=model is not None
        )

    for node in graph.variable_nodes():
        if node not in plan.accounted:
            plan.skip(graph.value_key(node) or "", "not part of the model or the optimizer", node)
    for key in graph.other_attributes():
        plan.skip(key, "not a variable")

    if plan.unmapped and strict:
        raise LegacyCheckpointError(path, plan.unmapped)
    for variable, value, _ in plan.assignments:
        variable.assign(value)
    result = LegacyCheckpointRestore(
        prefix=path,
        layout=parsed.layout if optimizer_node is not None else "model weights only",
        restored=tuple(restored for _, _, restored in plan.assignments),
        skipped=tuple(plan.skipped),
        unmapped=tuple(plan.unmapped),
    )
    if plan.unmapped:
        warnings.warn(
            f"load_legacy_checkpoint restored {path} partially (strict=False); not restored:\n"
            + "\n".join(f"  {item}" for item in plan.unmapped),
            UserWarning,
            stacklevel=2,
        )
    return result
