"""`load_legacy_checkpoint`: read the checkpoint, plan, then assign (or refuse) all at once."""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

import tensorflow as tf

from compat_lso.checkpoint.layouts import _ObjectGraph, _parse_optimizer
from compat_lso.checkpoint.plan import _Plan, _plan_model, _plan_optimizer
from compat_lso.checkpoint.result import LegacyCheckpointError, LegacyCheckpointRestore
from compat_lso.checkpoint.targets import _target_optimizer

# Dependencies of a Keras 2 model that hold no model weights: the compiled optimizer (restored
# separately), traced functions, the `root` self-reference `save_weights` writes, and
# `layer-N`, which names the same layers as `layer_with_weights-N` (plus layers without weights).
_NOT_MODEL_WEIGHTS = re.compile(
    r"optimizer|root|save_counter|(train|test|predict)_(tf_)?function|layer-\d+"
)


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
