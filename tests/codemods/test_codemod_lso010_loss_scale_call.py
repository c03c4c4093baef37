"""LSO010: opt.loss_scale() -> opt.loss_scale where opt is known to be a loss scale optimizer."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes

NEW = "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"


def test_rewrites():
    assert_rewrites(NEW + "print(opt.loss_scale())\n", NEW + "print(opt.loss_scale)\n")


def test_rewrites_on_shim_where_the_constructor_moves_too():
    assert_rewrites(
        NEW + "print(opt.loss_scale())\n",
        "import compat_lso\nopt = compat_lso.LossScaleOptimizer(sgd)\nprint(opt.loss_scale)\n",
        "shim",
    )


def test_rewrites_after_the_constructor_rule_in_the_same_run():
    assert_rewrites(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, 'dynamic')\n"
        "x = opt.loss_scale()\n",
        NEW + "x = opt.loss_scale\n",
    )


def test_keras3_reports():
    assert manual_codes(assert_unchanged(NEW + "print(opt.loss_scale())\n", "keras3")) == ["LSO010"]


@pytest.mark.parametrize(
    "before",
    [
        pytest.param("opt = make()\nopt.loss_scale()\n", id="unknown-object"),
        pytest.param(NEW + "opt = other()\nopt.loss_scale()\n", id="rebound-before-the-call"),
        pytest.param(
            NEW + "def f(opt):\n    return opt.loss_scale()\n", id="parameter-in-another-scope"
        ),
    ],
)
def test_noop(before):
    assert_unchanged(before)


def test_rewrites_on_the_shims_experimental_class():
    before = (
        "import compat_lso\nopt = compat_lso.experimental.LossScaleOptimizer(sgd, scale)\n"
        "print(opt.loss_scale())\n"
    )
    assert_rewrites(before, before.replace("loss_scale()", "loss_scale"))
