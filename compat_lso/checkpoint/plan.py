"""The plan: which checkpoint value goes into which target variable, made before assigning.

Every value ends up in exactly one list: assigned (restored), skipped, or unmapped; shapes and
dtypes are checked here, so that `strict=True` can refuse before anything is assigned.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import tensorflow as tf

from compat_lso.checkpoint.layouts import SLOT_TABLE, _CheckpointOptimizer, _ObjectGraph
from compat_lso.checkpoint.result import RestoredValue, SkippedValue
from compat_lso.checkpoint.targets import _describe, _is_variable, _resolve, _TargetOptimizer


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
