"""Keras 3's own loss scale optimizer tests, run from the installed wheel against the class Keras 3
code gets under `python -m compat_lso run` (`compat_lso.install()`).

Some Keras 3 wheels ship `keras/src/optimizers/loss_scale_optimizer_test.py` (3.12 and 3.15 do;
3.0-3.11, 3.13 and 3.14 do not). Each of its test cases runs here as one pytest test, with the
module's name `LossScaleOptimizer` bound to what `keras.mixed_precision.LossScaleOptimizer` is while
installed: a class that builds `compat_lso.LossScaleOptimizer`. Nothing of the file is kept in this
repository; a release whose wheel lacks it is a skip that says so.

The shim gives Keras 3 code Keras 2's meaning (docs/old-code.md), so some of Keras 3's assertions
cannot hold, by design: EXPECTED_DIFFERENCES lists each with its reason, as a strict xfail that
names the exception (a test that starts passing, or fails another way, fails the run).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any, NamedTuple

import pytest

import compat_lso
from tests.shim.backend import IS_KERAS_3

WHEEL_MODULE = "keras.src.optimizers.loss_scale_optimizer_test"
WHEEL_CLASS = "LossScaleOptimizerTest"


class Difference(NamedTuple):
    raises: type[BaseException]
    reason: str


# Keras 2's `apply_gradients` takes gradients as given: the TF 2.4 caller unscales them itself
# (`get_unscaled_gradients`). The shim divides them by the scale only after `scale_loss` ran
# since the last apply, as `Model.fit` and Keras 3 loops do (docs/shim.md); these tests pass
# gradients multiplied by the scale to `apply` without calling `scale_loss`.
_GRADIENTS_AS_GIVEN = Difference(
    AssertionError,
    "Keras 2's update rule: apply() without scale_loss() takes the gradients as given, as TF "
    "2.4's apply_gradients did, so gradients multiplied by the scale are not divided",
)
EXPECTED_DIFFERENCES = {
    "test_apply_with_no_vars": _GRADIENTS_AS_GIVEN,
    "test_finite_step_stateful": _GRADIENTS_AS_GIVEN,
    "test_finite_step_with_inner_loss_scale_stateful": _GRADIENTS_AS_GIVEN,
    "test_init_dynamic_arg": Difference(
        AssertionError,
        "dynamic=False is Keras 2's fixed loss scaling, which the shim keeps (Keras 3 refuses "
        "it); the test wraps one SGD twice, so Keras 2's one-wrapper check answers first",
    ),
    "test_init_unsupported_arg": Difference(
        TypeError,
        "an unknown keyword is a TypeError naming both generations' signatures, as TF 2.4's "
        "constructor raised it (Keras 3: ValueError)",
    ),
    "test_serialization": Difference(
        AssertionError,
        "get_config() writes the TF 2.4 form, `dynamic` beside Keras 3's keys (5 keys, not 4)",
    ),
}


def _wheel_test_case() -> Any:
    """Keras 3's test class from the installed wheel, or a reason why there is none."""
    if not IS_KERAS_3:
        return "tf.keras is Keras 2 here: Keras 3's own tests do not apply"
    if importlib.util.find_spec(WHEEL_MODULE) is None:
        import keras

        return (
            f"keras {keras.__version__}'s wheel does not ship {WHEEL_MODULE.replace('.', '/')}.py"
        )
    return getattr(importlib.import_module(WHEEL_MODULE), WHEEL_CLASS)


def _cases() -> list[Any]:
    test_case = _wheel_test_case()
    if isinstance(test_case, str):
        return [pytest.param(None, marks=pytest.mark.skip(reason=test_case), id="absent")]
    names = sorted(name for name in dir(test_case) if name.startswith("test"))
    params = []
    for name in names:
        difference = EXPECTED_DIFFERENCES.get(name)
        marks = (
            [pytest.mark.xfail(strict=True, raises=difference.raises, reason=difference.reason)]
            if difference
            else []
        )
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.fixture
def keras_3_code_class(monkeypatch):
    """`keras.mixed_precision.LossScaleOptimizer` while installed, as the wheel's module's name."""
    import keras

    monkeypatch.delenv("COMPAT_LSO_KEEP_NATIVE", raising=False)
    native = keras.mixed_precision.LossScaleOptimizer
    compat_lso.install()
    try:
        installed = keras.mixed_precision.LossScaleOptimizer
        assert installed is not native, "install() left Keras 3's own class in place"
        monkeypatch.setattr(importlib.import_module(WHEEL_MODULE), "LossScaleOptimizer", installed)
        yield installed
    finally:
        compat_lso.uninstall()


@pytest.mark.parametrize("name", _cases())
def test_keras_3s_own_test_case(name, keras_3_code_class):
    # debug(): setUp, the test and tearDown, with the exception raised as it is (unittest's
    # SkipTest is a pytest skip, with Keras's reason).
    _wheel_test_case()(name).debug()


def test_every_expected_difference_names_a_test_of_the_wheel():
    test_case = _wheel_test_case()
    if isinstance(test_case, str):
        pytest.skip(test_case)
    assert set(EXPECTED_DIFFERENCES) <= set(dir(test_case))
