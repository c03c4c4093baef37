"""LSO016: the TF 2.4-2.15 LossScaleOptimizer class used other than by calling it."""

import pytest

from codemods import table
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

TF = "import tensorflow as tf\n"
LSO = "tf.keras.mixed_precision.LossScaleOptimizer"

SHIM_REWRITES = [
    pytest.param(
        TF + f"class Scaled({LSO}):\n    pass\n",
        "import compat_lso\nclass Scaled(compat_lso.LossScaleOptimizer):\n    pass\n",
        id="base-class",
    ),
    pytest.param(
        TF + f"LSO = {LSO}\nopt = LSO(sgd, False, 8)\n",
        "import compat_lso\nLSO = compat_lso.LossScaleOptimizer\nopt = LSO(sgd, False, 8)\n",
        id="alias-re-pointed-once-its-calls-follow",
    ),
    pytest.param(
        TF + f"opt = {LSO}.from_config(config)\n",
        "import compat_lso\nopt = compat_lso.LossScaleOptimizer.from_config(config)\n",
        id="from-config-reads-tf24-configs-on-the-shim",
    ),
    pytest.param(
        TF + f"opt = build(factory={LSO})\n",
        "import compat_lso\nopt = build(factory=compat_lso.LossScaleOptimizer)\n",
        id="passed-as-an-argument",
    ),
    pytest.param(
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer\n"
        "class Scaled(LossScaleOptimizer):\n    pass\n",
        "import compat_lso\nclass Scaled(compat_lso.LossScaleOptimizer):\n    pass\n",
        id="imported-name-as-a-base-import-removed",
    ),
]


@pytest.mark.parametrize(("before", "after"), SHIM_REWRITES)
def test_shim_moves_the_class(before, after):
    findings = assert_rewrites(before, after, "shim")
    assert "LSO016" in {f.code for f in findings if f.fixed}


@pytest.mark.parametrize(("before", "after"), SHIM_REWRITES)
def test_keras2_leaves_it(before, after):
    assert not assert_unchanged(before, "keras2")


def test_keras3_reports_a_subclass():
    findings = assert_unchanged(TF + f"class Scaled({LSO}):\n    pass\n", "keras3")
    assert manual_codes(findings) == ["LSO016"]
    assert findings[0].message == (
        "tf.keras.mixed_precision.LossScaleOptimizer subclassed: Keras 3's class has other "
        "methods and arguments"
    )
    assert "super().__init__" in findings[0].help
    assert "--explain LSO016" in findings[0].help


def test_keras3_reports_a_subclass_of_the_imported_name():
    before = (
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer as LSO\n"
        "class Scaled(LSO):\n    pass\n"
    )
    assert manual_codes(assert_unchanged(before, "keras3")) == ["LSO016"]


KERAS3_NOOPS = [
    pytest.param(TF + f"ok = isinstance(opt, {LSO})\n", id="isinstance"),
    pytest.param(TF + f"factory = {LSO}\n", id="alias"),
    pytest.param(TF + f"opt = {LSO}.from_config(config)\n", id="from-config"),
]


@pytest.mark.parametrize("before", KERAS3_NOOPS)
def test_keras3_other_references_mean_the_same_class(before):
    assert not assert_unchanged(before, "keras3")


NOOPS = [
    pytest.param(
        TF + f"ok = isinstance(opt, {LSO})\n",
        id="isinstance-keeps-the-native-class-which-accepts-the-shims",
    ),
    pytest.param(TF + f"ok = issubclass(cls, (int, {LSO}))\n", id="issubclass-in-a-tuple"),
    pytest.param(TF + f"def f(opt: {LSO}) -> {LSO}:\n    return opt\n", id="annotations"),
    pytest.param(TF + f"x: {LSO} = make()\n", id="variable-annotation"),
    pytest.param(
        TF
        + f"class Scaled({LSO}):\n    def f(self, loss):\n        return self.scale_loss(loss)\n",
        id="keras-3-code",
    ),
    pytest.param(
        TF + f"class Scaled({LSO}):  # compat-lso: ignore[LSO016]\n    pass\n", id="suppressed"
    ),
    pytest.param(
        "import tf_keras\nclass Scaled(tf_keras.mixed_precision.LossScaleOptimizer):\n    pass\n",
        id="tf-keras",
    ),
]


@pytest.mark.parametrize("before", NOOPS)
@pytest.mark.parametrize("target", table.TARGETS)
def test_noop(before, target):
    assert not assert_unchanged(before, target)


def test_shim_alias_with_a_keras_3_call_through_it_stays_and_tf24_calls_move_one_by_one():
    before = TF + f"LSO = {LSO}\nopt = LSO(sgd, 1024)\nold = LSO(sgd, True, 8)\n"
    text, findings = rewrite(before, "shim")
    assert text == (
        "import compat_lso\n" + TF + f"LSO = {LSO}\nopt = LSO(sgd, 1024)\n"
        "old = compat_lso.LossScaleOptimizer(sgd, True, 8)\n"
    )
    assert manual_codes(findings) == ["LSO016"]
    (manual,) = [f for f in findings if not f.fixed]
    assert "a Keras 3 call goes through it (line 3)" in manual.message


def test_shim_leaves_an_alias_in_keras_3_code():
    assert not assert_unchanged(TF + f"LSO = {LSO}\nopt = LSO(sgd, 1024)\n", "shim")


def test_shim_moves_the_call_and_keeps_the_isinstance_check_in_one_file():
    assert_rewrites(
        TF + f"opt = {LSO}(sgd)\nassert isinstance(opt, {LSO})\n",
        "import compat_lso\n" + TF + "opt = compat_lso.LossScaleOptimizer(sgd)\n"
        f"assert isinstance(opt, {LSO})\n",
        "shim",
    )
