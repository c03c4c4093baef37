"""Reading the checkpoint: its object graph, and where each Keras 2 layout keeps the optimizer.

The layouts: Keras 2's legacy `OptimizerV2` (slots by name), Keras 2's new `optimizer.Optimizer`
(per-variable lists), and TF 2.2's loss scale optimizer, which kept its inner optimizer under
`base_optimizer`. Nothing here looks at the target objects.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

from tensorflow.core.protobuf import trackable_object_graph_pb2

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VARIABLE_VALUE = "VARIABLE_VALUE"

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
