"""Where the trace attaches: every optimizer that scales a loss, in every Keras, when imported.

Each Keras defines its loss scale optimizers in one module (`MODULES`); Keras 3's plain
optimizers scale a loss too when given `loss_scale_factor=N` (a fixed scale: what
`--target keras3` makes of TF 2.4's `dynamic=False`), through their base class
(`keras.src.optimizers.base_optimizer`). When such a module is imported (or at once, if it
already is), the trace wraps, on its classes:

- `__init__`: the optimizer gets its index (order of creation) and its state, and the class of
  the instance (compat_lso's, a user's subclass, Keras 2's concrete classes) gets its own step
  and scaling methods wrapped where they are defined (`_wrap_class`), once;
- the step: `apply` on Keras 3 (what `apply_gradients` and `Model.fit` call), `apply_gradients`
  on Keras 2 (what `minimize` and `Model.fit` call). A step calling another wrapped step of the
  same optimizer (a subclass calling `super()`) is recorded once, by the outer call;
- `scale_loss` / `get_scaled_loss`: each loss (not a constant: the codemod's scale-back
  `opt.scale_loss(1.0)` is none), kept in order for this thread's next step.

Nothing here is imported unless the trace is enabled; the methods are wrapped for the rest of
the process (the trace does not turn off).
"""

from __future__ import annotations

import functools
import sys
import threading
import types
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from compat_lso.core.after_import import AfterImport
from compat_lso.trace.recorder import OptimizerState, Recorder

# module -> (generation, the classes whose constructors register optimizers). Keras 2's
# exported `LossScaleOptimizer` is `BaseLossScaleOptimizer`, whose metaclass constructs one of
# the two concrete classes (Keras 2.11+); the experimental class subclasses `LossScaleOptimizer`.
_KERAS_2_CLASSES = ("LossScaleOptimizer", "LossScaleOptimizerV3")
MODULES = {
    "keras.src.optimizers.loss_scale_optimizer": ("keras3", ("LossScaleOptimizer",)),
    "keras.src.mixed_precision.loss_scale_optimizer": ("keras2", _KERAS_2_CLASSES),  # 2.13-2.15
    "keras.mixed_precision.loss_scale_optimizer": ("keras2", _KERAS_2_CLASSES),  # 2.12
    "tf_keras.src.mixed_precision.loss_scale_optimizer": ("keras2", _KERAS_2_CLASSES),
    # Keras 3's plain optimizers with loss_scale_factor=N: multiply in scale_loss, divide in apply.
    "keras.src.optimizers.base_optimizer": ("factor", ("BaseOptimizer",)),
}
_MODULE_NAMES = frozenset(MODULES)
STEP_METHOD = {"keras3": "apply", "keras2": "apply_gradients", "factor": "apply"}
SCALING_METHODS = ("scale_loss", "get_scaled_loss")
_STATE = "_compat_lso_trace_state"  # the optimizer's OptimizerState, in its __dict__
_WRAPPED = "__compat_lso_trace_wrapped__"

_local = threading.local()


def attach(recorder: Recorder) -> None:
    """Wrap the classes of each module in `MODULES`: now if imported, else when imported."""
    from compat_lso import audit

    audit.collect_per_step()  # where `run --audit` audits, each step says what it recorded
    for module_name in MODULES:
        module = sys.modules.get(module_name)
        if module is not None:
            _wrap_module(recorder, module)
    if not any(getattr(finder, "names", None) == _MODULE_NAMES for finder in sys.meta_path):
        sys.meta_path.insert(0, AfterImport(MODULES, functools.partial(_wrap_module, recorder)))


def _wrap_module(recorder: Recorder, module: types.ModuleType) -> None:
    generation, class_names = MODULES[module.__name__]
    for class_name in class_names:
        cls = getattr(module, class_name, None)
        if cls is None or _WRAPPED in cls.__dict__:
            continue
        type.__setattr__(cls, _WRAPPED, True)
        cls.__init__ = _wrap_init(recorder, generation, cls.__init__)
        _wrap_class(recorder, cls, generation)


def _wrap_init(recorder: Recorder, generation: str, original: Any) -> Any:
    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if generation == "factor":
            if _scales_by_factor(self):
                _register(recorder, self, generation)
            return
        # A Keras 3 LossScaleOptimizer switched its inner optimizer's factor off: it is traced.
        inner = vars(self).get("inner_optimizer")
        inner_state = None if inner is None else vars(inner).get(_STATE)
        if inner_state is not None and inner_state.steps == 0 and not _scales_by_factor(inner):
            recorder.forget(inner_state)
            del vars(inner)[_STATE]
        _register(recorder, self, generation)

    setattr(__init__, _WRAPPED, True)
    return __init__


def _register(recorder: Recorder, optimizer: Any, generation: str) -> OptimizerState:
    state: OptimizerState | None = vars(optimizer).get(_STATE)
    if state is None:  # else the outer constructor of a subclass registered it
        from compat_lso.trace import measure

        cls = type(optimizer)
        state = recorder.register(f"{cls.__module__}.{cls.__qualname__}", generation)
        state.created = measure.where()  # in its constructor (a factor set later: its step)
        vars(optimizer)[_STATE] = state  # not setattr: Keras would track it
        state.alive = weakref.ref(optimizer)
        _wrap_class(recorder, cls, generation)
    return state


def _scales_by_factor(optimizer: Any) -> bool:
    """A Keras 3 plain optimizer that scales the loss (never a LossScaleOptimizer, which keeps
    its own scale and is traced as one)."""
    return (
        vars(optimizer).get("loss_scale_factor") is not None
        and getattr(optimizer, "inner_optimizer", None) is None
    )


def _wrap_class(recorder: Recorder, cls: type, generation: str) -> None:
    """Wrap the step and scaling methods `cls` has, in the class that defines each."""
    for method_name in (STEP_METHOD[generation], *SCALING_METHODS):
        owner = next((c for c in cls.__mro__ if method_name in c.__dict__), None)
        if owner is None:
            continue
        method = owner.__dict__[method_name]
        if getattr(method, _WRAPPED, False) or not callable(method):
            continue
        if method_name in SCALING_METHODS:
            wrapped = _wrap_scaling(method)
        else:
            wrapped = _wrap_step(recorder, method, generation)
        setattr(wrapped, _WRAPPED, True)
        type.__setattr__(owner, method_name, wrapped)


def _wrap_scaling(original: Any) -> Any:
    @functools.wraps(original)
    def scaling(self: Any, loss: Any, *args: Any, **kwargs: Any) -> Any:
        state = vars(self).get(_STATE)
        if state is not None and not callable(loss):
            from compat_lso.trace import measure

            if not measure.constant(loss):  # `opt.scale_loss(1.0)` scales back: not a loss
                state.pending_losses.setdefault(threading.get_ident(), []).append(loss)
        return original(self, loss, *args, **kwargs)

    return scaling


def _wrap_step(recorder: Recorder, original: Any, generation: str) -> Any:
    @functools.wraps(original)
    def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        state = vars(self).get(_STATE)
        if generation == "factor":  # every Keras 3 optimizer's apply: only those that scale
            if not _scales_by_factor(self):
                return original(self, *args, **kwargs)
            if state is None:  # a factor set after construction
                state = _register(recorder, self, generation)
        if state is None or id(self) in _inside():
            return original(self, *args, **kwargs)
        if generation in ("keras3", "factor"):
            grads, variables = _keras3_arguments(args, kwargs)
            args = (grads, variables, *args[2:])
        else:
            pairs = _keras2_arguments(args, kwargs)
            args = (pairs, *args[1:])
            grads, variables = [g for g, _ in pairs], [v for _, v in pairs]
        with _stepping(self):
            return _traced_step(
                recorder,
                state,
                self,
                original=original,
                args=args,
                kwargs=kwargs,
                grads=grads,
                variables=variables,
            )

    return step


def _traced_step(
    recorder: Recorder,
    state: OptimizerState,
    optimizer: Any,
    *,
    original: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    grads: Sequence[Any],
    variables: Sequence[Any] | None,
) -> Any:
    from compat_lso import audit
    from compat_lso.trace import measure

    site = measure.where()
    scaled = state.pending_losses.pop(threading.get_ident(), [])
    losses = [value for value in map(measure.loss_value, scaled) if value is not None]
    scale_before = measure.scale(optimizer, state)
    rate = measure.learning_rate(optimizer, state)  # read before the step, as the step reads it
    updated = (
        None
        if variables is None
        else [v for g, v in zip(grads, variables, strict=True) if g is not None]
    )
    result = original(optimizer, *args, **kwargs)
    if updated is None:  # Keras 3's apply(grads): the variables the optimizer was built with
        built_with = optimizer._trainable_variables
        updated = [v for g, v in zip(grads, built_with, strict=False) if g is not None]
    # The audit's records of this step (`run --audit`), each with its condition; None: no audit.
    records = audit.step_records()
    checks = [] if records is None else measure.audit_checks(records)
    if measure.first_replica():
        values = measure.StepValues(
            scale_before=scale_before,
            scale_after=measure.scale(optimizer, state),
            counter=measure.counter(optimizer, state),
            iterations=optimizer.iterations,
            learning_rate=rate,
            losses=losses,
            checks=[condition for _, condition in checks],
        )
        about = {
            "created": state.created,
            "gradients": len(grads),
            "none_gradients": sum(g is None for g in grads),
            "names": [measure.name(v) for v in updated],
        }
        if records is not None:
            about["audit"] = [record for record, _ in checks]
        measure.emit(recorder, state, site, about, values, digest=measure.digest(updated))
    return result


def _keras3_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Any], Any]:
    grads = list(args[0] if args else kwargs.pop("grads"))
    variables = args[1] if len(args) > 1 else kwargs.pop("trainable_variables", None)
    return grads, None if variables is None else list(variables)


def _keras2_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[Any, Any]]:
    # An iterator (zip) can be read once: read here, handed on as a list.
    return list(args[0] if args else kwargs.pop("grads_and_vars"))


def _inside() -> set[int]:
    inside: set[int] | None = getattr(_local, "inside", None)
    if inside is None:
        inside = _local.inside = set()
    return inside


@contextmanager
def _stepping(optimizer: Any) -> Iterator[None]:
    _inside().add(id(optimizer))
    try:
        yield
    finally:
        _inside().discard(id(optimizer))
