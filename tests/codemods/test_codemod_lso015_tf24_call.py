"""LSO015: TF 2.4-2.15 LossScaleOptimizer(inner_optimizer, dynamic, initial_scale,
dynamic_growth_steps) calls: keywords for Keras 3, compat_lso for the shim, nothing for keras2."""

import re

import pytest

from codemods import table
from codemods.rules import _fixed_scale
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

TF = "import tensorflow as tf\n"
LSO = "tf.keras.mixed_precision.LossScaleOptimizer"
SGD = "tf.keras.optimizers.SGD"

KERAS3_REWRITES = [
    pytest.param(
        TF + f"opt = {LSO}(opt, True, 1024, 500)\n",
        TF + f"opt = {LSO}(opt, initial_scale=1024, dynamic_growth_steps=500)\n",
        id="positional-arguments-become-keywords-and-dynamic-goes",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt, True)\n",
        TF + f"opt = {LSO}(opt)\n",
        id="positional-dynamic-true-alone",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt, dynamic=True, initial_scale=2**10)\n",
        TF + f"opt = {LSO}(opt, initial_scale=2**10)\n",
        id="dynamic-keyword-true-dropped",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt, True, None, None)\n",
        TF + f"opt = {LSO}(opt)\n",
        id="none-means-the-default-which-keras-3-shares",
    ),
    pytest.param(
        TF + f"opt = {LSO}(inner_optimizer=opt, initial_scale=None, dynamic=True)\n",
        TF + f"opt = {LSO}(inner_optimizer=opt)\n",
        id="keywords-in-any-order",
    ),
    pytest.param(
        TF + f"opt = {LSO}(\n    opt,  # the inner one\n    True,\n    2048,\n)\n",
        TF + f"opt = {LSO}(\n    opt,  # the inner one\n    initial_scale=2048,\n)\n",
        id="multiline-call-keeps-its-layout-and-comments",
    ),
    pytest.param(
        TF + f"opt = {LSO}(\n    opt,  # the inner one\n    dynamic=True,\n)\n",
        TF + f"opt = {LSO}(\n    opt,  # the inner one\n)\n",
        id="last-argument-on-its-own-line-removed-with-the-line-comment-before-kept",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt, True, None)\n",
        TF + f"opt = {LSO}(opt)\n",
        id="adjacent-arguments-removed-together",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt, True, None, 10)\n",
        TF + f"opt = {LSO}(opt, dynamic_growth_steps=10)\n",
        id="arguments-removed-before-a-kept-one",
    ),
    pytest.param(
        "import keras\nopt = keras.mixed_precision.LossScaleOptimizer(opt, True, 64)\n",
        "import keras\nopt = keras.mixed_precision.LossScaleOptimizer(opt, initial_scale=64)\n",
        id="standalone-keras",
    ),
    pytest.param(
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer as LSO\n"
        "opt = LSO(opt, True, 8, 3)\n",
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer as LSO\n"
        "opt = LSO(opt, initial_scale=8, dynamic_growth_steps=3)\n",
        id="imported-under-an-alias",
    ),
    # A fixed scale: the inner optimizer's loss_scale_factor, where exact.
    pytest.param(
        TF + f"opt = {LSO}({SGD}(0.1), dynamic=False, initial_scale=128)\n",
        TF + f"opt = {SGD}(0.1, loss_scale_factor=128)\n",
        id="fixed-scale-becomes-loss-scale-factor",
    ),
    pytest.param(
        TF + f"opt = {LSO}({SGD}(0.1), False, 128)\n",
        TF + f"opt = {SGD}(0.1, loss_scale_factor=128)\n",
        id="fixed-scale-positional-which-keras-3-would-misread-silently",
    ),
    pytest.param(
        TF
        + f"model.compile(optimizer={LSO}({SGD}(), dynamic=False, initial_scale=8), loss='mse')\n",
        TF + f"model.compile(optimizer={SGD}(loss_scale_factor=8), loss='mse', "
        "auto_scale_loss=False)\n",
        id="fixed-scale-into-compile-which-must-not-wrap-it-again",
    ),
    pytest.param(
        TF + "def build(model):\n"
        f"    opt = {LSO}({SGD}(learning_rate=0.1,), False, 2**7)\n"
        "    model.compile(opt, 'mse')\n"
        "    return model\n",
        TF + "def build(model):\n"
        f"    opt = {SGD}(learning_rate=0.1, loss_scale_factor=2**7,)\n"
        "    model.compile(opt, 'mse', auto_scale_loss=False)\n"
        "    return model\n",
        id="fixed-scale-through-a-name-into-compile-trailing-comma-kept",
    ),
    pytest.param(
        TF + f"opt = {LSO}({SGD}(), dynamic=False, initial_scale=4)\n"
        "def step(x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = opt.get_scaled_loss(f(x))\n"
        "    grads = opt.get_unscaled_gradients(tape.gradient(loss, v))\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        TF + f"opt = {SGD}(loss_scale_factor=4)\n"
        "def step(x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = opt.scale_loss(f(x))\n"
        "    grads = tape.gradient(loss, v)\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        id="fixed-scale-in-a-custom-loop-with-lso011",
    ),
]


@pytest.mark.parametrize(("before", "after"), KERAS3_REWRITES)
def test_keras3_rewrites(before, after):
    findings = assert_rewrites(before, after, "keras3")
    assert "LSO015" in {f.code for f in findings if f.fixed}
    # What changes in behaviour: the dynamic rule's pointer, or the fixed scale's own words.
    assert all(
        f.help in (table.KERAS3_BEHAVIOUR, _fixed_scale.FIXED_HELP)
        for f in findings
        if f.code == "LSO015"
    )


@pytest.mark.parametrize(("before", "after"), KERAS3_REWRITES)
def test_keras2_leaves_tf24_code_alone(before, after):
    assert not assert_unchanged(before, "keras2")


KERAS3_REPORTS = [
    pytest.param(
        TF + f"opt = {LSO}(sgd, dynamic=False, initial_scale=128)\n",
        "the inner optimizer `sgd` is not built here",
        id="fixed-scale-inner-optimizer-built-elsewhere",
    ),
    pytest.param(
        TF + f"def build():\n    return {LSO}({SGD}(), dynamic=False, initial_scale=8)\n",
        "passed on, returned or stored",
        id="fixed-scale-returned",
    ),
    pytest.param(
        TF + f"self.opt = {LSO}({SGD}(), dynamic=False, initial_scale=8)\n",
        "passed on, returned or stored",
        id="fixed-scale-stored-on-an-attribute",
    ),
    pytest.param(
        TF + f"opt = {LSO}({SGD}(), dynamic=False, initial_scale=8)\ntrain(opt)\n",
        "line 3",
        id="fixed-scale-passed-to-a-function",
    ),
    pytest.param(
        TF + f"opt = {LSO}({SGD}(), dynamic=False, initial_scale=8)\n"
        f"model.compile(opt)\nassert isinstance(model.optimizer, {LSO})\n",
        "checks isinstance",
        id="fixed-scale-in-a-file-that-checks-for-a-loss-scale-optimizer",
    ),
    pytest.param(
        TF + f"opt = {LSO}({SGD}(), dynamic=False, initial_scale=8)\n"
        "model.compile(opt, auto_scale_loss=True)\n",
        "auto_scale_loss other than False",
        id="fixed-scale-into-a-compile-that-wraps-it",
    ),
    pytest.param(
        TF + f"opt = {LSO}(make_optimizer(), False, 8)\n",
        "is not a known Keras optimizer",
        id="fixed-scale-inner-from-a-factory",
    ),
    pytest.param(
        TF + f"opt = {LSO}(tf.keras.optimizers.legacy.SGD(), False, 8)\n",
        "is not a known Keras optimizer",
        id="fixed-scale-legacy-optimizer-keras-3-lacks",
    ),
    pytest.param(
        TF + f"opt = {LSO}({SGD}(loss_scale_factor=2), False, 8)\n",
        "already has a loss_scale_factor",
        id="fixed-scale-inner-already-scaled",
    ),
    pytest.param(
        TF + f"opt = {LSO}({SGD}(), False, 8, 100)\n",
        "takes no dynamic_growth_steps",
        id="fixed-scale-with-growth-steps-which-tf24-refuses-too",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt, dynamic=flag)\n",
        "only known at run time",
        id="run-time-dynamic",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt, FLAGS.dynamic)\n",
        "TF 2.4 reads it as `dynamic`",
        id="run-time-second-positional-argument-read-differently",
    ),
    pytest.param(TF + f"opt = {LSO}(*args, **kwargs)\n", "unpacked", id="unpacked-arguments"),
]


@pytest.mark.parametrize(("before", "reason"), KERAS3_REPORTS)
def test_keras3_reports(before, reason):
    if ".legacy." in before:
        # A legacy inner optimizer is LSO024's: Keras 3's class of the same rule, with a note.
        text, findings = rewrite(before, "keras3")
        assert text == before.replace(".legacy.", ".")
        assert [f.code for f in findings if f.note and f.code == "LSO024"] == ["LSO024"]
    else:
        findings = assert_unchanged(before, "keras3")
    assert manual_codes(findings) == ["LSO015"]
    (finding,) = [f for f in findings if not f.note and f.code == "LSO015"]
    assert reason in finding.message
    if "(dynamic=False) not rewritten" in finding.message:
        # A fixed scale: dropping `dynamic` (the general help) would make it dynamic on Keras 3.
        # eclipsesource/checkbox-detection-tf-models's official/modeling/performance.py.
        found = re.search(r"(?:initial_scale=|False, )(\d+)", before)
        assert found is not None
        scale = found.group(1)
        assert finding.help == (
            f"a fixed scale: drop the wrapper, give the inner optimizer loss_scale_factor={scale} "
            "and compile(..., auto_scale_loss=False) (--explain LSO015)"
        )
        return
    assert finding.help == table.RULES_BY_CODE["LSO015"].instruction_on("keras3")


SHIM_REWRITES = [
    pytest.param(
        TF + f"opt = {LSO}(opt, False, 128)\n",
        "import compat_lso\nopt = compat_lso.LossScaleOptimizer(opt, False, 128)\n",
        id="arguments-kept-as-written-unused-tensorflow-import-removed",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt)\n",
        "import compat_lso\nopt = compat_lso.LossScaleOptimizer(opt)\n",
        id="defaults-only-is-tf24-code-in-a-file-without-keras-3-api",
    ),
    pytest.param(
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer\n"
        "opt = LossScaleOptimizer(opt, dynamic=False, initial_scale=8)\n",
        "import compat_lso\nopt = compat_lso.LossScaleOptimizer(opt, dynamic=False, "
        "initial_scale=8)\n",
        id="from-import-removed-with-its-last-use",
    ),
    pytest.param(
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer, set_global_policy\n"
        "set_global_policy('mixed_float16')\n"
        "opt = LossScaleOptimizer(opt)\n"
        "assert isinstance(opt, LossScaleOptimizer)\n",
        "import compat_lso\n"
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer, set_global_policy\n"
        "set_global_policy('mixed_float16')\n"
        "opt = compat_lso.LossScaleOptimizer(opt)\n"
        "assert isinstance(opt, LossScaleOptimizer)\n",
        id="import-kept-for-the-isinstance-check-which-keeps-the-native-class",
    ),
    pytest.param(
        "from tensorflow.keras import mixed_precision\n"
        "opt = mixed_precision.LossScaleOptimizer(opt, True, 2**10)\n",
        "import compat_lso\nopt = compat_lso.LossScaleOptimizer(opt, True, 2**10)\n",
        id="module-alias-removed-with-its-last-use",
    ),
    pytest.param(
        "import keras\nopt = keras.mixed_precision.LossScaleOptimizer(opt)\n",
        "import compat_lso\nopt = compat_lso.LossScaleOptimizer(opt)\n",
        id="standalone-keras",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt)\nscaled = opt.scale_loss(loss)\nopt.get_scaled_loss(loss)\n",
        "import compat_lso\nopt = compat_lso.LossScaleOptimizer(opt)\n"
        "scaled = opt.scale_loss(loss)\nopt.get_scaled_loss(loss)\n",
        id="tf24-api-wins-over-keras-3-api-in-the-same-file",
    ),
]


@pytest.mark.parametrize(("before", "after"), SHIM_REWRITES)
def test_shim_moves_to_compat_lso(before, after):
    findings = assert_rewrites(before, after, "shim")
    assert "LSO015" in {f.code for f in findings if f.fixed}


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_keywords_keras_3_reads_alike_are_left_there(target):
    # ... and moved on shim, where (in a file without Keras 3's API) they are TF 2.4 code.
    # keras3: only LSO022's note (the class is Keras 3's, with its own dynamic rule).
    findings = assert_unchanged(TF + f"opt = {LSO}(opt, initial_scale=1024)\n", target)
    assert [f.code for f in findings] == (["LSO022"] if target == "keras3" else [])


NOOPS = [
    pytest.param(TF + f"opt = {LSO}(opt, 1024, 500)\n", id="keras-3-positional-initial-scale"),
    pytest.param(TF + f"opt = {LSO}(opt, name='lso')\n", id="keras-3-name-keyword"),
    pytest.param(
        TF + f"opt = {LSO}(opt)\nscaled = opt.scale_loss(loss)\n",
        id="keras-3-code-scale-loss-in-the-file",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt)\nprint(opt.dynamic_scale)\n", id="keras-3-code-dynamic-scale-read"
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt)\nsgd = {SGD}(loss_scale_factor=4)\n",
        id="keras-3-code-loss-scale-factor",
    ),
    pytest.param(
        "import tf_keras\nopt = tf_keras.mixed_precision.LossScaleOptimizer(opt, False, 8)\n",
        id="tf-keras-keeps-keras-2",
    ),
    pytest.param(
        "class LossScaleOptimizer:\n    pass\nopt = LossScaleOptimizer(opt, False, 8)\n",
        id="local-class-with-the-same-name",
    ),
    pytest.param(
        TF + f"opt = {LSO}(opt, False, 8)  # compat-lso: ignore[LSO015]\n", id="suppressed"
    ),
    pytest.param("s = 'tf.keras.mixed_precision.LossScaleOptimizer(opt, False, 8)'\n", id="string"),
]


@pytest.mark.parametrize("before", NOOPS)
@pytest.mark.parametrize("target", table.TARGETS)
def test_noop(before, target):
    assert not assert_unchanged(before, target)


def test_keras3_fixed_through_a_name_adds_auto_scale_loss_to_every_compile():
    text, findings = rewrite(
        TF + f"opt = {LSO}({SGD}(), False, 8)\na.compile(optimizer=opt)\nb.compile(opt, loss=f)\n",
        "keras3",
    )
    assert text == (
        TF + f"opt = {SGD}(loss_scale_factor=8)\n"
        "a.compile(optimizer=opt, auto_scale_loss=False)\n"
        "b.compile(opt, loss=f, auto_scale_loss=False)\n"
    )
    assert "(2x)" in findings[0].message


def test_keras3_fixed_keeps_a_compile_that_already_does_not_wrap():
    assert_rewrites(
        TF + f"opt = {LSO}({SGD}(), False, 8)\nm.compile(opt, auto_scale_loss=False)\n",
        TF + f"opt = {SGD}(loss_scale_factor=8)\nm.compile(opt, auto_scale_loss=False)\n",
        "keras3",
    )


def test_shim_reports_a_call_tf24s_class_refused_instead_of_moving_it():
    # The experimental class's loss_scale= on the new class never ran on TF 2.4 either: moving it
    # to compat_lso with "meaning kept" would claim a meaning it never had.
    findings = assert_unchanged(TF + f"opt = {LSO}(opt, loss_scale='dynamic')\n", "shim")
    assert manual_codes(findings) == ["LSO015"]
    assert "unexpected arguments ['loss_scale']" in findings[0].message
    assert "compat_lso.experimental.LossScaleOptimizer" in findings[0].help
