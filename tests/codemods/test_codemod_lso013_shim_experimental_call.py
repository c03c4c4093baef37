"""LSO013: compat_lso.experimental.LossScaleOptimizer -> compat_lso.LossScaleOptimizer."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "import compat_lso\nopt = compat_lso.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
            "import compat_lso\nopt = compat_lso.LossScaleOptimizer(opt)\n",
            id="dynamic",
        ),
        pytest.param(
            "from compat_lso import experimental as mixed_precision\n"
            "scale = mixed_precision.DynamicLossScale(initial_loss_scale=2**10, "
            "increment_period=4)\nopt = mixed_precision.LossScaleOptimizer(sgd, scale)\n",
            "import compat_lso\n"
            "opt = compat_lso.LossScaleOptimizer(sgd, initial_scale=2**10, "
            "dynamic_growth_steps=4)\n",
            id="alias-import-goes-when-nothing-else-reads-it",
        ),
        pytest.param(
            "from compat_lso import experimental as mp\nopt = mp.LossScaleOptimizer(sgd, 8)\n"
            "fixed = mp.FixedLossScale(8)\n",
            "import compat_lso\nfrom compat_lso import experimental as mp\n"
            "opt = compat_lso.LossScaleOptimizer(sgd, dynamic=False, initial_scale=8)\n"
            "fixed = mp.FixedLossScale(8)\n",
            id="alias-import-stays-while-read",
        ),
    ],
)
@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_rewrites(before, after, target):
    assert_rewrites(before, after, target)


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            "import compat_lso\nopt = compat_lso.experimental.LossScaleOptimizer(opt, scale)\n",
            id="runtime-scale-keeps-working",
        ),
        pytest.param(
            "import compat_lso\nok = isinstance(o, compat_lso.experimental.LossScaleOptimizer)\n",
            id="class-reference",
        ),
        pytest.param(
            "from compat_lso import experimental\n", id="unused-import-of-a-name-that-exists"
        ),
    ],
)
def test_left_alone_and_not_reported(before):
    assert not assert_unchanged(before, "keras2")


def test_shim_target_output_for_a_runtime_scale_is_stable():
    old = (
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, scale)\n"
    )
    assert_rewrites(
        old,
        "import compat_lso\nopt = compat_lso.experimental.LossScaleOptimizer(sgd, scale)\n",
        "shim",
    )


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_the_shims_import_stays_when_an_alias_of_its_module_goes(target):
    # `mp = compat_lso.experimental` was the only read of `import compat_lso`; the call through
    # the alias is now spelled `compat_lso.X`, which reads that import (it was deleted, leaving a
    # NameError).
    before = (
        "import compat_lso\n"
        "mp = compat_lso.experimental\n"
        "mp.LossScaleOptimizer(opt, 'dynamic').minimize\n"
    )
    after = "import compat_lso\ncompat_lso.LossScaleOptimizer(opt).minimize\n"
    assert_rewrites(before, after, target)
