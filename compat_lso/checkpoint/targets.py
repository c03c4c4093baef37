"""The target side: today's model and optimizer, and where each of their variables is.

Keras 3's optimizer, Keras 2's new `optimizer.Optimizer` and Keras 2's legacy `OptimizerV2`
keep iterations, learning rate and slots in different places; `_TargetOptimizer` hides that.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import tensorflow as tf

from compat_lso import _backend
from compat_lso.checkpoint.layouts import SLOT_TABLE

_LAYER_WITH_WEIGHTS = re.compile(r"layer_with_weights-(\d+)")


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
