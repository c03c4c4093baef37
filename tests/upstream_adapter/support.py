"""The names upstream's test files import from Keras, as objects of the backend under test.

Upstream's test modules import Keras internals (`keras.mixed_precision.loss_scale_optimizer`,
`keras.optimizer_v2.gradient_descent`, `keras.combinations`, ...). `sources.py` binds each of
those names to the object of the same name here (`sources.IMPORTS`). Nothing here decides a
test's outcome: each name is what the upstream module meant, on the backend under test.

Which classes are under test is chosen with the environment variable
`COMPAT_LSO_UPSTREAM_TARGET`:

- `compat` (the default): compat_lso's classes. `loss_scale_optimizer.LossScaleOptimizer` and
  `LossScaleOptimizerV3` are compat_lso's class for a legacy and for a new inner optimizer (on
  Keras 2 the concrete classes compat_lso builds, so that `type(opt) == ...` means what it
  meant upstream; on Keras 3 there is one class), `BaseLossScaleOptimizer` is
  `compat_lso.LossScaleOptimizer`, and `LossScaleOptimizerV1` (the TF 2.4-2.8 name of the
  experimental class) is `compat_lso.experimental.LossScaleOptimizer`.
- `native`: the backend's own Keras 2 classes, the reference the ports are compared against
  (Keras 2 backends only; Keras 2.9+ has no experimental class, so the V1 tests skip).

Keras 3 has one optimizer class hierarchy: `gradient_descent.SGD` and `adam.Adam` (Keras 2's
`OptimizerV2` line, which TF 2.4-2.10 code reached as `tf.keras.optimizers.SGD`) are what
`tf.keras.optimizers.SGD` is there, and combinations that ask for `OptimizerV2` by name, or for
TF1 graph mode, are skipped with the reason (see `_Keras3Combination`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import types
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf
from absl.testing import parameterized
from tensorflow.python.framework import combinations as tf_combinations

import compat_lso
import compat_lso.experimental
from compat_lso import _backend

TARGET = os.environ.get("COMPAT_LSO_UPSTREAM_TARGET", "compat")
if TARGET not in ("compat", "native"):
    raise ValueError(
        f"COMPAT_LSO_UPSTREAM_TARGET must be 'compat' or 'native', but got: {TARGET!r}"
    )
NATIVE = TARGET == "native"
KERAS_3 = _backend.keras_version() >= _backend.KERAS_3
KERAS_PACKAGE = _backend.keras_package().__name__  # keras (2 or 3) or tf_keras
BACKEND = f"{'tf_keras' if KERAS_PACKAGE == 'tf_keras' else 'keras'} {_backend.keras_version()}"


def _keras2_module(path: str) -> Any:
    """A Keras 2 internal module: in `keras.src` from Keras 2.13, in `keras` before."""
    try:
        return importlib.import_module(f"{KERAS_PACKAGE}.src.{path}")
    except ModuleNotFoundError:
        return importlib.import_module(f"{KERAS_PACKAGE}.{path}")


class _NoOptimizerV2:
    """Keras 3 has no `OptimizerV2`: the stand-in that combinations asking for it name."""


# -- optimizers ---------------------------------------------------------------------------

if KERAS_3:
    optimizer_v2 = types.SimpleNamespace(OptimizerV2=_NoOptimizerV2)
    gradient_descent = types.SimpleNamespace(SGD=tf.keras.optimizers.SGD)
    adam = types.SimpleNamespace(Adam=tf.keras.optimizers.Adam)
else:
    optimizer_v2 = types.SimpleNamespace(OptimizerV2=tf.keras.optimizers.legacy.Optimizer)
    gradient_descent = types.SimpleNamespace(SGD=tf.keras.optimizers.legacy.SGD)
    adam = types.SimpleNamespace(Adam=tf.keras.optimizers.legacy.Adam)
optimizer_experimental = types.SimpleNamespace(Optimizer=tf.keras.optimizers.Optimizer)
sgd_experimental = types.SimpleNamespace(SGD=tf.keras.optimizers.SGD)
adam_experimental = types.SimpleNamespace(Adam=tf.keras.optimizers.Adam)
learning_rate_schedule = types.SimpleNamespace(
    LearningRateSchedule=tf.keras.optimizers.schedules.LearningRateSchedule
)
optimizers = types.SimpleNamespace(
    serialize=tf.keras.optimizers.serialize,
    deserialize=tf.keras.optimizers.deserialize,
    convert_to_legacy_optimizer=None
    if KERAS_3
    else _keras2_module("optimizers").convert_to_legacy_optimizer,
)


# -- the loss scale optimizer classes under test ------------------------------------------


def _loss_scale_optimizer_module() -> types.SimpleNamespace:
    if NATIVE:
        if KERAS_3:
            return types.SimpleNamespace()  # conftest skips every port: nothing to compare
        from compat_lso.keras2 import optimizer as _keras2

        native = _keras2._native  # Keras's own module, as compat_lso found it on this version
        return types.SimpleNamespace(
            LossScaleOptimizer=native.LossScaleOptimizer,
            LossScaleOptimizerV3=native.LossScaleOptimizerV3,
            BaseLossScaleOptimizer=native.BaseLossScaleOptimizer,
            LossScaleOptimizerV1=None,
        )
    if KERAS_3:
        return types.SimpleNamespace(
            LossScaleOptimizer=compat_lso.LossScaleOptimizer,
            LossScaleOptimizerV3=compat_lso.LossScaleOptimizer,
            BaseLossScaleOptimizer=compat_lso.LossScaleOptimizer,
            LossScaleOptimizerV1=compat_lso.experimental.LossScaleOptimizer,
        )
    from compat_lso.keras2 import optimizer as _keras2

    public = compat_lso.LossScaleOptimizer
    return types.SimpleNamespace(
        LossScaleOptimizer=_keras2._concrete_class(public, _keras2._native.LossScaleOptimizer),
        LossScaleOptimizerV3=_keras2._concrete_class(public, _keras2._native.LossScaleOptimizerV3),
        BaseLossScaleOptimizer=public,
        LossScaleOptimizerV1=compat_lso.experimental.LossScaleOptimizer,
    )


loss_scale_optimizer = _loss_scale_optimizer_module()


# -- tf.mixed_precision.experimental, as each port's upstream module reached it -------------

# Keras 2.8's loss scale optimizer test passes TensorFlow's own LossScale classes (in TF 2.8,
# `tf.mixed_precision.experimental.DynamicLossScale is tf.compat.v1.mixed_precision.
# DynamicLossScale`), and pokes their variables: the same class objects, still exported there.
tf_loss_scales = types.SimpleNamespace(
    LossScale=tf.compat.v1.mixed_precision.LossScale,
    FixedLossScale=tf.compat.v1.mixed_precision.FixedLossScale,
    DynamicLossScale=tf.compat.v1.mixed_precision.DynamicLossScale,
)
# The policy test checks which class the experimental Policy creates: what the name
# `tf.mixed_precision.experimental` is bound to once `compat_lso.install()` has run.
compat_loss_scales = types.SimpleNamespace(
    LossScale=compat_lso.experimental.LossScale,
    FixedLossScale=compat_lso.experimental.FixedLossScale,
    DynamicLossScale=compat_lso.experimental.DynamicLossScale,
)


def enable_mixed_precision_graph_rewrite(opt: Any, loss_scale: Any = "dynamic") -> Any:
    """`tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite` under test."""
    if NATIVE:
        return tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt, loss_scale)
    return compat_lso.experimental.enable_mixed_precision_graph_rewrite(opt, loss_scale)


def disable_mixed_precision_graph_rewrite() -> None:
    if NATIVE:
        tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()
    else:
        compat_lso.experimental.disable_mixed_precision_graph_rewrite()


mixed_precision_graph_rewrite = types.SimpleNamespace(
    enable_mixed_precision_graph_rewrite=enable_mixed_precision_graph_rewrite,
    disable_mixed_precision_graph_rewrite=disable_mixed_precision_graph_rewrite,
)


# -- test utilities that Keras 3 no longer ships (keras.testing_infra) -----------------------


class _Keras3Combination(tf.__internal__.test.combinations.TestCombination):  # type: ignore[misc]
    """Skip, with the reason, the combinations that ask for what Keras 3 does not have."""

    def should_execute_combination(self, kwargs: dict[str, Any]) -> tuple[bool, str | None]:
        if not KERAS_3:
            return True, None
        if kwargs.get("mode") == "graph":
            return False, "Keras 3 optimizers do not run in TF1 graph mode (mode='graph')"
        if kwargs.get("opt_cls") is _NoOptimizerV2:
            return False, (
                "Keras 3 has no OptimizerV2: its one optimizer class runs in the "
                "opt_cls=Optimizer combination of this test"
            )
        return True, None


def _with_keras3_skips(
    generate: Callable[..., Any], defaults: tuple[Any, ...]
) -> Callable[..., Any]:
    return functools.partial(generate, test_combinations=(*defaults, _Keras3Combination()))


_tf_generate = tf.__internal__.test.combinations.generate
combinations = types.SimpleNamespace(
    combine=tf.__internal__.test.combinations.combine,
    times=tf.__internal__.test.combinations.times,
    # TensorFlow's defaults: `mode` ("graph" runs under tf.Graph().as_default()) and
    # `tf_api_version`, as keras.testing_infra.test_combinations builds on them.
    generate=_with_keras3_skips(
        _tf_generate.func,
        (tf_combinations.EagerGraphCombination(), tf_combinations.TFVersionCombination()),
    ),
)
test_combinations = types.SimpleNamespace(
    combine=combinations.combine,
    times=combinations.times,
    generate=combinations.generate,
    run_all_keras_modes=lambda always_skip_v1=False: _run_all_keras_modes(always_skip_v1),
)


def _run_all_keras_modes(always_skip_v1: bool) -> Callable[[Any], Any]:
    """keras.testing_infra's run_all_keras_modes: a v2 eager and a v2 tf.function case.

    The tests that use it read no run mode, so both cases run the same body in eager context, as
    Keras's decorator runs them; the TF1 session case (unless `always_skip_v1`) is skipped.
    """
    modes = ["v2_eager", "v2_function"] + ([] if always_skip_v1 else ["v1_session"])

    def decorator(test_method: Any) -> Any:
        # Not functools.wraps: the combinations read the signature, which takes `keras_mode`.
        def with_keras_mode(self: Any, keras_mode: str) -> Any:
            if keras_mode == "v1_session":
                self.skipTest("TF1 sessions are not run: TF2 behaviour is enabled")
            return test_method(self)

        with_keras_mode.__name__ = test_method.__name__
        with_keras_mode.__doc__ = test_method.__doc__

        return combinations.generate(combinations.combine(keras_mode=modes))(with_keras_mode)

    return decorator


def run_v2_only(obj: Any = None) -> Any:
    """Skip unless TF2 behaviour is on (it always is in this suite)."""

    def decorator(test_method: Any) -> Any:
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not tf.__internal__.tf2.enabled():
                self.skipTest("Test is only compatible with TF v2.")
            return test_method(self, *args, **kwargs)

        # make_decorator, as Keras's decorators: the combinations see the test's own signature.
        return tf.__internal__.decorator.make_decorator(test_method, wrapper)

    return decorator if obj is None else decorator(obj)


# -- dtype policies -------------------------------------------------------------------------


def _set_v2_dtype_behavior(enabled: bool) -> Callable[[Any], Any]:
    def decorator(fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if KERAS_3:
                if not enabled:
                    test_case = kwargs["self"] if "self" in kwargs else args[0]
                    test_case.skipTest("Keras 3 has no V1 dtype behavior to turn on")
                return fn(*args, **kwargs)
            base_layer_utils = _keras2_module("engine.base_layer_utils")
            saved = base_layer_utils.V2_DTYPE_BEHAVIOR
            base_layer_utils.V2_DTYPE_BEHAVIOR = enabled
            try:
                return fn(*args, **kwargs)
            finally:
                base_layer_utils.V2_DTYPE_BEHAVIOR = saved

        return tf.__internal__.decorator.make_decorator(fn, wrapper)

    return decorator


testing_utils = types.SimpleNamespace(
    enable_v2_dtype_behavior=_set_v2_dtype_behavior(True),
    disable_v2_dtype_behavior=_set_v2_dtype_behavior(False),
)


def _v2_dtype_behavior_enabled() -> bool:
    if KERAS_3:
        return True
    return bool(_keras2_module("engine.base_layer_utils").v2_dtype_behavior_enabled())


base_layer_utils = types.SimpleNamespace(v2_dtype_behavior_enabled=_v2_dtype_behavior_enabled)


@contextlib.contextmanager
def _keras3_policy_scope(policy: Any) -> Iterator[None]:
    old_policy = tf.keras.mixed_precision.global_policy()
    try:
        tf.keras.mixed_precision.set_global_policy(policy)
        yield
    finally:
        tf.keras.mixed_precision.set_global_policy(old_policy)


def _mp_policy() -> types.SimpleNamespace:
    mixed_precision = tf.keras.mixed_precision
    if KERAS_3:
        import keras

        # keras.dtype_policies has the policy (de)serializers where it exists; otherwise Keras's
        # generic ones are what they called.
        namespace = getattr(keras, "dtype_policies", None)
        if namespace is not None and hasattr(namespace, "serialize"):
            serialize, deserialize = namespace.serialize, namespace.deserialize
        else:
            serialize = keras.saving.serialize_keras_object
            deserialize = keras.saving.deserialize_keras_object
        policy_scope: Any = _keras3_policy_scope
    else:
        policy_module = _keras2_module("mixed_precision.policy")
        serialize, deserialize = policy_module.serialize, policy_module.deserialize
        policy_scope = policy_module.policy_scope
    return types.SimpleNamespace(
        Policy=mixed_precision.Policy,
        PolicyV1=None if NATIVE else compat_lso.experimental.Policy,
        global_policy=mixed_precision.global_policy,
        set_global_policy=mixed_precision.set_global_policy,
        policy_scope=policy_scope,
        serialize=serialize,
        deserialize=deserialize,
    )


mp_policy = _mp_policy()


def _device_compatibility_check() -> Any:
    if KERAS_3:
        return None  # Keras 3 does not check the device when a mixed policy is made
    return _keras2_module("mixed_precision.device_compatibility_check")


device_compatibility_check = _device_compatibility_check()


# -- `tf`: tensorflow.compat.v2 with the names upstream's bodies reach that TF 2.9+ removed ---


class _Overlay(types.ModuleType):
    """A module that is `target`, except for the dotted names in `overrides`."""

    def __init__(self, target: Any, overrides: dict[str, Any], name: str) -> None:
        super().__init__(name)
        self._target = target
        self._overrides = overrides

    def __getattr__(self, name: str) -> Any:
        if name in self._overrides:
            return self._overrides[name]
        prefix = name + "."
        nested = {k[len(prefix) :]: v for k, v in self._overrides.items() if k.startswith(prefix)}
        value = getattr(self._target, name, None)
        if nested:
            return _Overlay(value, nested, f"{self.__name__}.{name}")
        if value is None and not hasattr(self._target, name):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return value


def tensorflow_with(loss_scales: types.SimpleNamespace) -> Any:
    """`tensorflow.compat.v2`, with `tf.mixed_precision.experimental` bound to `loss_scales`
    and the graph rewrite (`tf.compat.v1.mixed_precision.*_graph_rewrite`) under test."""
    import tensorflow.compat.v2 as tf_v2

    return _Overlay(
        tf_v2,
        {
            "mixed_precision.experimental": loss_scales,
            "compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite": (
                enable_mixed_precision_graph_rewrite
            ),
            "compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite": (
                disable_mixed_precision_graph_rewrite
            ),
        },
        "tensorflow.compat.v2",
    )


class _KerasParameterizedTestCase(tf.test.TestCase, parameterized.TestCase):  # type: ignore[misc]
    """keras_parameterized.TestCase (Keras 2.8): clears the Keras session after each test."""

    def tearDown(self) -> None:
        tf.keras.backend.clear_session()
        super().tearDown()


keras_parameterized = types.SimpleNamespace(TestCase=_KerasParameterizedTestCase)

test_utils = types.SimpleNamespace(run_v2_only=run_v2_only)
