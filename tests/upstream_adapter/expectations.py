"""Where upstream's tests cannot pass against compat_lso, each case and its reason.

The project's record of how compat_lso differs from Keras 2.8's and tf-keras's own tests, and
why (docs/shim.md sums it up); `plugin.py` turns each entry into a marker when `nox -s
upstream_tests` runs those files from their checkouts.

Every entry names the tests (a regular expression searched in the pytest node id), the
backends and targets it applies to, and why. `skip`: the test cannot run there (what it needs
does not exist). `xfail` (always strict, so a test that starts passing fails the run): it runs
and fails for a known reason, in upstream's code or a deliberate difference of compat_lso's,
which docs/shim.md lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from packaging.version import Version

from compat_lso import _backend
from tests.upstream_adapter import support


def keras2() -> bool:
    return not support.KERAS_3


def keras3() -> bool:
    return support.KERAS_3


def native() -> bool:
    return support.NATIVE


def compat() -> bool:
    return not support.NATIVE


def always() -> bool:
    return True


def keras3_compat() -> bool:
    return support.KERAS_3 and not support.NATIVE


@dataclass(frozen=True)
class Expectation:
    """`tests` (a regex searched in the node id) `kind` ("skip" or "xfail") for `reason`.

    An xfail names the exception it fails with (`raises`): failing any other way is a failure.
    """

    tests: str
    kind: str
    reason: str
    when: Callable[[], bool] = always
    raises: type[BaseException] | tuple[type[BaseException], ...] = AssertionError

    def marker(self) -> Any:
        if self.kind == "skip":
            return pytest.mark.skip(reason=self.reason)
        return pytest.mark.xfail(strict=True, raises=self.raises, reason=self.reason)


K28_LSO = r"test_keras28_loss_scale_optimizer\.py::\w+::"
TFK_LSO = r"test_tf_keras_loss_scale_optimizer\.py::\w+::"
ANY_LSO = r"_loss_scale_optimizer\.py::\w+::"
POLICY = r"test_keras28_policy\.py::\w+::"
REWRITE = r"test_keras28_mixed_precision_graph_rewrite\.py::\w+::"
NO_EXPERIMENTAL_CLASS = (
    "no native class to compare: Keras 2.9+ has no experimental LossScaleOptimizer or "
    "experimental Policy (Keras 2.8's LossScaleOptimizerV1 / PolicyV1)"
)
KERAS_3_OPTIMIZER = "Keras 3 optimizers have no OptimizerV2 API: "

EXPECTATIONS: list[Expectation] = [
    # -- Upstream's tests against the Keras releases after them (both targets) -------------
    Expectation(
        K28_LSO + r"testApplyGradientsGetsUnwrappedTensorsWithNewOptimizer_",
        "xfail",
        "upstream's apply_gradients override passes skip_gradients_aggregation as the second "
        "positional argument, which is `name` in Keras 2.11+ and does not exist in Keras 3",
        raises=(ValueError, TypeError),
    ),
    Expectation(
        TFK_LSO + r"testApplyGradientsGetsUnwrappedTensorsWithNewOptimizer_",
        "xfail",
        "upstream's apply_gradients override calls Keras 3's apply_gradients with "
        "skip_gradients_aggregation=, which Keras 3 does not have",
        when=keras3,
        raises=TypeError,
    ),
    Expectation(
        POLICY + r"test_policy_errors_",
        "xfail",
        "tests tf.keras.mixed_precision.Policy's own messages, reworded in Keras 2.13 "
        "('Received: name=float16'; Keras 3: 'Cannot convert 'abc' to a ... DTypePolicy')",
        when=lambda: _backend.keras_version() >= Version("2.13"),
    ),
    Expectation(
        POLICY + r"test_serialization_",
        "xfail",
        "tests tf.keras.mixed_precision.Policy's own serialized form, which has 'module' and "
        "'registered_name' keys since Keras 2.13 (Keras 3: and no plain dtype strings)",
    ),
    Expectation(
        K28_LSO + r"testErrorWhenV3LsoWrapsV2Optimizer$",
        "xfail",
        "tf_keras's message names tf_keras/optimizer_expeirmental/optimizer.py where Keras "
        "2.8's named keras/...: the package was renamed",
        when=lambda: support.KERAS_PACKAGE == "tf_keras",
    ),
    Expectation(
        K28_LSO + r"testErrorWhenWrappingLegacyKerasOptimizers$",
        "xfail",
        "Keras 2.9+ dropped the hint about tensorflow.python.keras optimizers from the message "
        "(compat_lso keeps Keras 2.8's)",
        when=native,
        raises=AssertionError,
    ),
    # -- The native run: what has no native class to run against ----------------------------
    Expectation(
        K28_LSO
        + r"(testV1Optimizer|testPassingV1LossScale|test_from_config_with_invalid_multiplier"
        r"|\w*(getconfig|fromconfig)_v1|testSerializationWithBuiltInOptimizer_test_lsotype_v1)",
        "skip",
        NO_EXPERIMENTAL_CLASS,
        when=native,
    ),
    Expectation(
        REWRITE + r"(test_wrap_optimizer|test_optimizer_errors)",
        "skip",
        NO_EXPERIMENTAL_CLASS,
        when=native,
    ),
    Expectation(
        POLICY + r"(test_repr|test_loss_scale)_", "skip", NO_EXPERIMENTAL_CLASS, when=native
    ),
    # -- compat_lso's deliberate differences -------------------------------------------------
    Expectation(
        K28_LSO + r"(testV1Optimizer|testPassingV1LossScale)_",
        "xfail",
        "asserts isinstance(opt.loss_scale, tf.Tensor) for the experimental class: compat_lso "
        "returns a LossScaleValue, which TensorFlow and Keras read as the float32 tensor "
        "(convert_to_tensor, get_value, Session.run, format) and which stays callable as TF "
        "2.2's loss scale was (opt.loss_scale()); no tf.Tensor can be called",
        when=compat,
    ),
    Expectation(
        TFK_LSO + r"testConvertToLegacyOptimizer$",
        "xfail",
        "Keras's convert_to_legacy_optimizer rebuilds a loss scale optimizer from its class "
        "name, as Keras's own class: the same TF 2.4 behaviour (on Keras 2 compat_lso's class "
        "is Keras's, with argument checks), another type",
        when=lambda: keras2() and compat(),
    ),
    Expectation(
        ANY_LSO + r"(testErrorWhenV2LsoWrapsV3Optimizer|testErrorWhenV3LsoWrapsV2Optimizer)$",
        "skip",
        "Keras 3 has one kind of optimizer: LossScaleOptimizer and LossScaleOptimizerV3 are "
        "one class there, with nothing to refuse",
        when=keras3,
    ),
    # -- Keras 3: what its optimizers and dtype policies do not have ------------------------
    Expectation(
        ANY_LSO + r"testCheckpoint_\w*(savewithls_False|restorewithls_False)",
        "xfail",
        KERAS_3_OPTIMIZER + "the plain optimizer has no minimize() (a plain <-> loss scale "
        "checkpoint is tested in tests/checkpoint/test_plain_optimizer_checkpoints.py)",
        when=keras3,
        raises=AttributeError,
    ),
    Expectation(
        TFK_LSO + r"testSerializationWithBuiltInOptimizer_test_lsotype_v1$",
        "xfail",
        "Keras 2.12 serializes with no 'registered_name', so renaming the class to "
        "LossScaleOptimizerV1 (as TF 2.4-2.8 wrote it) drops compat_lso's registration: Keras "
        "2.12's own class comes back, which is the reference behaviour, another type",
        when=lambda: keras2() and compat() and _backend.keras_version() < Version("2.13"),
    ),
    Expectation(
        ANY_LSO + r"testCheckpoint_\w*restorewithls_True_savewithls_True",
        "xfail",
        "Keras 3.0's TensorFlow optimizers are no TensorFlow Trackable: upstream's MySGD calls "
        "_track_trackable, which Keras 3.1 (KerasAutoTrackable in the optimizer's bases) added",
        when=lambda: keras3() and _backend.keras_version() < Version("3.1"),
        raises=AttributeError,
    ),
    Expectation(
        ANY_LSO + r"testDynamicLossScaleWithSlots_",
        "xfail",
        KERAS_3_OPTIMIZER + "get_slot_names() (asserted after the steps, which pass)",
        when=keras3,
        raises=AttributeError,
    ),
    Expectation(
        ANY_LSO + r"testIterations$",
        "xfail",
        KERAS_3_OPTIMIZER + "`iterations` has no setter",
        when=keras3,
        raises=AttributeError,
    ),
    Expectation(
        ANY_LSO + r"testWeightMethods$",
        "xfail",
        KERAS_3_OPTIMIZER + "weights, get_weights()",
        when=keras3,
        raises=AttributeError,
    ),
    Expectation(
        ANY_LSO + r"testHyperParametersExposed$",
        "xfail",
        KERAS_3_OPTIMIZER + "hyperparameter variables and the `lr` alias",
        when=keras3,
        raises=AttributeError,
    ),
    Expectation(
        ANY_LSO + r"testCustomAggregater$",
        "xfail",
        KERAS_3_OPTIMIZER + "the gradient_aggregator argument",
        when=keras3,
        raises=ValueError,
    ),
    Expectation(
        ANY_LSO + r"testLossScaleDelegationWithWrapper_",
        "xfail",
        KERAS_3_OPTIMIZER + "Optimizer(name) (Keras 3's first parameter is learning_rate)",
        when=keras3,
        raises=ValueError,
    ),
    Expectation(
        ANY_LSO + r"testApplyGradientsGetsUnwrappedTensors_",
        "xfail",
        KERAS_3_OPTIMIZER + "apply_gradients(grads_and_vars, name, "
        "experimental_aggregate_gradients), which upstream's override calls",
        when=keras3,
        raises=TypeError,
    ),
    Expectation(
        TFK_LSO + r"testConvertToLegacyOptimizer$",
        "skip",
        "Keras 3 has no legacy optimizers to convert to",
        when=keras3,
    ),
    Expectation(
        TFK_LSO + r"testErrorWhenWrappingNonOptimizer$",
        "xfail",
        "the expected message names tf.keras.optimizers.experimental.Optimizer, which Keras 3 "
        "does not have; compat_lso's Keras 3 message names tf.keras.optimizers.Optimizer only",
        when=keras3_compat,
    ),
    Expectation(
        POLICY + r"(test_config|test_dtype_attributes|test_global_policy|test_policy_scope)_test_",
        "xfail",
        "Keras 3's DTypePolicy has no '_infer' policy",
        when=keras3,
        raises=ValueError,
    ),
    Expectation(
        POLICY + r"test_repr_",
        "xfail",
        "Keras 3's dtype policy class is DTypePolicy: repr '<DTypePolicy \"float32\">'",
        when=keras3,
    ),
    Expectation(
        POLICY + r"test_global_policy_dtype_error_",
        "xfail",
        "Keras 3's set_global_policy accepts non-floating-point policies",
        when=keras3,
    ),
    Expectation(
        POLICY + r"test_error_if_graph_rewrite_enabled_",
        "xfail",
        "Keras 3's set_global_policy does not read TensorFlow's graph rewrite flag",
        when=keras3,
    ),
    Expectation(
        POLICY + r"test_device_compatibility_warning_",
        "skip",
        "Keras 3 does not check the device when a mixed policy is created",
        when=keras3,
    ),
]


def markers_for(nodeid: str) -> list[Any]:
    return [e.marker() for e in EXPECTATIONS if e.when() and re.search(e.tests, nodeid)]
