"""`install()` / `uninstall()`: old code's names, pointing at the shim.

Two generations of old code. The removed TF 2.1-2.8 names are added only where the installed
TensorFlow lacks them. On Keras 3 (`tf.keras` on TF >= 2.16 without TF_USE_LEGACY_KERAS), the
TF 2.4-2.15 name `tf.keras.mixed_precision.LossScaleOptimizer` (and standalone
`keras.mixed_precision.LossScaleOptimizer`) also gets TF 2.15's meaning back, unless
`keep_native=True` or COMPAT_LSO_KEEP_NATIVE=1 (see `compat_lso/keras3/installed.py`).
`uninstall()` removes exactly what `install()` added and puts back what it replaced.

The namespaces restored, as TF 2.3 had them:

    tf.keras.mixed_precision.experimental  LossScaleOptimizer, Policy, set_policy, global_policy
    tf.compat.v1.keras.mixed_precision.experimental   the same
    tf.mixed_precision.experimental        LossScale, FixedLossScale, DynamicLossScale
    tf.train.experimental                  the same, enable/disable_mixed_precision_graph_rewrite
    keras.mixed_precision.experimental     as tf.keras's, if `keras` is the package behind tf.keras

Each is importable too (`import tensorflow.keras.mixed_precision.experimental`, `from
tensorflow.keras.mixed_precision import experimental as mixed_precision`).

`Model.compile` gets the TF 2.4-2.8 behaviour for a model whose dtype policy is an
`experimental.Policy`: the optimizer is wrapped with the policy's loss scale (None: not at all).
With Keras 3's names replaced, a `mixed_float16` model's optimizer is wrapped as TF 2.15 did it,
with Keras 2's update rule.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

from compat_lso import _backend
from compat_lso.installer.environment import keep_native_requested

_KERAS_NAMES = ("LossScaleOptimizer", "Policy", "set_policy", "global_policy")
_LOSS_SCALE_NAMES = ("LossScale", "FixedLossScale", "DynamicLossScale")
_GRAPH_REWRITE_NAMES = (
    "enable_mixed_precision_graph_rewrite",
    "disable_mixed_precision_graph_rewrite",
)

_lock = threading.Lock()
# What install() did, newest last, so that uninstall() can undo exactly that: the experimental
# names, and apart from them Keras 3's replaced names (`keep_native` can change between calls).
_undo: list[Callable[[], None]] = []
_undo_native: list[Callable[[], None]] = []
# `compat_lso.keras3.installed` while Keras 3's names are replaced, else None; read by compile.
_state = types.SimpleNamespace(native_replacement=None)


def install(*, keep_native: bool | None = None, audit: bool | None = None) -> None:
    """Make old code's names work again; a repeated call only applies a changed `keep_native`.

    Restores the removed TF 2.1-2.8 `experimental` names on every backend. On Keras 3 it also
    puts a class with Keras 2's (TF 2.4-2.15) meaning in place of
    `tf.keras.mixed_precision.LossScaleOptimizer` and `keras.mixed_precision.LossScaleOptimizer`,
    and `Model.compile` under `mixed_float16` wraps with the shim's class, as TF 2.15 did.

    Args:
        keep_native: on Keras 3, True leaves `tf.keras.mixed_precision.LossScaleOptimizer` and
            `compile()`'s loss scaling as Keras 3 has them (for code already written for
            Keras 3); False gives them TF 2.15's meaning; None (the default) reads the
            COMPAT_LSO_KEEP_NATIVE environment variable, and replaces unless it is set. On
            Keras 2 backends the native class already has that meaning and nothing is replaced.
        audit: True starts the runtime audit (`compat_lso.audit`): at exit, a summary of each
            place where Keras 3's own class would have trained differently; None (the default)
            starts it when `python -m compat_lso run --audit` asked for it.
    """
    from compat_lso import audit as audit_module

    if keep_native is None:
        keep_native = keep_native_requested()
    with _lock:
        if not _undo:
            _install_experimental_names()
            _install_legacy_optimizers()
        if audit or (audit is None and audit_module.requested()):
            audit_module.enable()
        replacement = _replacement_module()
        if replacement is None:
            return
        if keep_native:
            _restore_native_names()
        elif not _undo_native:
            _replace_native_names(replacement)


def uninstall() -> None:
    """Remove what install() added, put back what it replaced, and nothing else."""
    with _lock:
        _restore_native_names()
        while _undo:
            _undo.pop()()


def is_installed() -> bool:
    return bool(_undo)


def native_names_replaced() -> bool:
    """Whether Keras 3's `LossScaleOptimizer` names have TF 2.15's meaning now."""
    return bool(_undo_native)


def _replacement_module() -> Any:
    # None on Keras 2 (one selection point: `compat_lso._backend`).
    return _backend.install_time_names()


def _install_experimental_names() -> None:
    import tensorflow as tf

    # Here, not at the top: `compat_lso.experimental` imports TensorFlow, and the start-up hook
    # imports this module before TensorFlow is (it installs right after TensorFlow's import).
    from compat_lso import experimental

    keras_namespace = _namespace(
        "tensorflow.keras.mixed_precision.experimental",
        {name: getattr(experimental, name) for name in _KERAS_NAMES},
    )
    _add_submodule_to_both_objects(
        lambda: tf.keras.mixed_precision, "tensorflow.keras.mixed_precision", keras_namespace
    )
    # The compat alias TF 2.4 documented for the experimental class.
    _add_submodule_to_both_objects(
        lambda: tf.compat.v1.keras.mixed_precision,
        "tensorflow.compat.v1.keras.mixed_precision",
        keras_namespace,
    )

    loss_scales = {name: getattr(experimental, name) for name in _LOSS_SCALE_NAMES}
    tf_mixed_precision = getattr(tf, "mixed_precision", None)
    if tf_mixed_precision is None:
        tf_mixed_precision = _namespace("tensorflow.mixed_precision", {})
        _add_attribute(tf, "mixed_precision", tf_mixed_precision)
        _add_module("tensorflow.mixed_precision", tf_mixed_precision)
    _add_submodule(
        tf_mixed_precision,
        "tensorflow.mixed_precision",
        "experimental",
        _namespace("tensorflow.mixed_precision.experimental", loss_scales),
    )

    for name, value in {
        **loss_scales,
        **{name: getattr(experimental, name) for name in _GRAPH_REWRITE_NAMES},
    }.items():
        _add_attribute(tf.train.experimental, name, value)

    keras_package = _backend.keras_package()
    # Standalone `keras` gets the names only when it is the package behind tf.keras: with
    # TF_USE_LEGACY_KERAS=1, `import keras` is Keras 3 while the shim serves tf_keras.
    if keras_package.__name__ == "keras":
        _add_submodule(
            keras_package.mixed_precision,
            "keras.mixed_precision",
            "experimental",
            keras_namespace,
        )

    _wrap_compile(tf.keras.Model, experimental)


def _install_legacy_optimizers() -> None:
    """Keras 3: TF 2.15's `tf.keras.optimizers.legacy.X` builds Keras 3's X where that is the
    same rule (keras3/legacy_optimizers.py), and every optimizer takes Keras 2's `lr` (constructor
    and attribute, keras3/keras2_lr.py); Keras 2 has both itself. Kept with `keep_native` too:
    Keras 3's own names there only raise ImportError, and Keras 3 refuses `lr=`."""
    replacement = _replacement_module()
    if replacement is not None:
        _undo.extend(replacement.install_legacy_optimizers())
        _undo.extend(replacement.install_keras2_lr())


def _replace_native_names(replacement: Any) -> None:
    """Put TF 2.15's meaning behind Keras 3's `LossScaleOptimizer` names (see keras3/installed)."""
    import keras
    import tensorflow as tf

    native = replacement.NativeLossScaleOptimizer
    # The module objects old code reaches the name through: `tf.keras.mixed_precision` (which
    # is `keras.mixed_precision` until something imports `tensorflow.keras.mixed_precision`),
    # the imported `tensorflow.keras.mixed_precision`, and standalone `keras.mixed_precision`
    # (also `tf.compat.v1.keras.mixed_precision`). `keras.optimizers.LossScaleOptimizer` is
    # left alone: Keras 2 had no such name, so only code written for Keras 3 spells it.
    modules = [
        tf.keras.mixed_precision,
        importlib.import_module("tensorflow.keras.mixed_precision"),
        keras.mixed_precision,
    ]
    for module in {id(m): m for m in modules}.values():
        if module.__dict__.get("LossScaleOptimizer") is native:
            _replace_attribute(module, "LossScaleOptimizer", replacement.LossScaleOptimizer)
    _state.native_replacement = replacement

    def undo() -> None:
        _state.native_replacement = None

    _undo_native.append(undo)


def _restore_native_names() -> None:
    while _undo_native:
        _undo_native.pop()()


def _replace_attribute(owner: Any, name: str, value: Any) -> None:
    original = getattr(owner, name)
    setattr(owner, name, value)

    def undo() -> None:
        if getattr(owner, name, None) is value:
            setattr(owner, name, original)

    _undo_native.append(undo)


def _namespace(name: str, attributes: dict[str, Any]) -> types.ModuleType:
    module = types.ModuleType(name, f"Restored by compat_lso.install(): {', '.join(attributes)}")
    module.__dict__.update(attributes)
    module.__all__ = list(attributes)  # type: ignore[attr-defined]
    module.__compat_lso_namespace__ = True  # type: ignore[attr-defined]
    return module


def _add_attribute(owner: Any, name: str, value: Any) -> None:
    if hasattr(owner, name):  # TensorFlow still has it: never replace a real name
        return
    setattr(owner, name, value)

    def undo() -> None:
        if getattr(owner, name, None) is value:
            delattr(owner, name)

    _undo.append(undo)


def _add_module(qualified_name: str, module: types.ModuleType) -> None:
    if qualified_name in sys.modules:
        return
    sys.modules[qualified_name] = module

    def undo() -> None:
        if sys.modules.get(qualified_name) is module:
            del sys.modules[qualified_name]

    _undo.append(undo)


def _add_submodule_to_both_objects(
    attribute: Callable[[], Any], parent_name: str, module: types.ModuleType
) -> None:
    # `import tensorflow.keras.mixed_precision` (and, on TF 2.12, `import
    # tensorflow.compat.v1.keras.mixed_precision`) makes TensorFlow build a new module object and
    # rebind the attribute to it. Importing it here first means both spellings reach the module
    # patched below; the object the attribute held before is patched too.
    # Where the name is no importable module (`tensorflow.compat.v1.keras` on Keras 3), the
    # attribute is the only object.
    attribute_module = attribute()
    with contextlib.suppress(ModuleNotFoundError):
        importlib.import_module(parent_name)
    for parent in {id(m): m for m in (attribute_module, attribute())}.values():
        _add_submodule(parent, parent_name, "experimental", module)


def _add_submodule(parent: Any, parent_name: str, name: str, module: types.ModuleType) -> None:
    # One module object can be reached under several names (on Keras 3, `tf.keras.mixed_precision`,
    # `tf.compat.v1.keras.mixed_precision` and `keras.mixed_precision` are one object): the
    # attribute is set once, and each name becomes importable.
    if not hasattr(parent, name):
        _add_attribute(parent, name, module)
    present = getattr(parent, name)
    # TF 2.12's module wrapper (`tf.compat.v1.keras.mixed_precision`) keeps a deleted attribute
    # in its cache, so an earlier install's namespace can outlive uninstall(): it holds the same
    # classes, and its name is made importable again.
    if present is module or getattr(present, "__compat_lso_namespace__", False):
        _add_module(f"{parent_name}.{name}", present)


def _wrap_compile(model_class: type, experimental: types.ModuleType) -> None:
    # Wrapped where it is defined (Keras 2: Model; Keras 3: Trainer), not on Model: Keras 3's
    # `compile_from_config` takes a class whose `compile` differs from `Trainer.compile` for a
    # custom one and skips compiling, so `load_model` would lose the optimizer.
    model_class = next(owner for owner in model_class.__mro__ if "compile" in owner.__dict__)
    original = model_class.__dict__["compile"]
    inherited = original

    @functools.wraps(inherited)
    def compile(self: Any, optimizer: Any = "rmsprop", *args: Any, **kwargs: Any) -> Any:
        policy = getattr(self, "dtype_policy", None)
        if not isinstance(policy, experimental.Policy) or optimizer is None:
            replacement = _state.native_replacement
            if replacement is not None:
                auto_scale_loss = _argument(inherited, "auto_scale_loss", True, args, kwargs)
                optimizer = replacement.optimizer_for_compile(self, optimizer, auto_scale_loss)
            return inherited(self, optimizer, *args, **kwargs)
        optimizer = _optimizer_for_policy(optimizer, policy, experimental)
        result = inherited(self, optimizer, *args, **kwargs)
        if policy.loss_scale is None:
            _unwrap_if_keras_wrapped(self, optimizer)
        return result

    compile.__compat_lso_wrapper__ = True  # type: ignore[attr-defined]
    model_class.compile = compile  # type: ignore[attr-defined]

    def undo() -> None:
        model_class.compile = original  # type: ignore[attr-defined]

    _undo.append(undo)


def _argument(
    function: Any, name: str, default: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The value `function(self, optimizer, *args, **kwargs)` would get for parameter `name`."""
    try:
        bound = inspect.signature(function).bind(None, None, *args, **kwargs)
    except TypeError:  # the call itself is wrong: `function` says how
        return default
    return bound.arguments.get(name, default)


def _optimizer_for_policy(optimizer: Any, policy: Any, experimental: types.ModuleType) -> Any:
    """TF 2.4-2.8's `Model._get_optimizer` for a policy that carries a loss scale."""
    import tensorflow as tf

    optimizer = tf.keras.optimizers.get(optimizer)
    loss_scale = policy.loss_scale
    if loss_scale is None or isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
        return optimizer
    # A LossScale object went to the experimental class in TF 2.4, as written here.
    return experimental.LossScaleOptimizer._without_warning(optimizer, loss_scale)


def _unwrap_if_keras_wrapped(model: Any, optimizer: Any) -> None:
    """`loss_scale=None` meant no loss scaling; Keras wraps every mixed_float16 model anyway."""
    import tensorflow as tf

    wrapped = model.optimizer
    if (
        isinstance(wrapped, tf.keras.mixed_precision.LossScaleOptimizer)
        and wrapped is not optimizer
        and wrapped.inner_optimizer is optimizer
    ):
        optimizer._is_wrapped_by_loss_scale_optimizer = False
        model.optimizer = optimizer
