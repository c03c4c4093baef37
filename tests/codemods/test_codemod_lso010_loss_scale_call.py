"""LSO010: opt.loss_scale() -> opt.loss_scale where opt is known to be a loss scale optimizer."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

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


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_rewrites_a_loss_scale_optimizer_a_function_of_the_module_returns(target):
    # Issue 32: `model, opt = build()`, then the TF 2.1-2.3 call on what build() made.
    before = (
        "import tensorflow as tf\ndef build():\n    model = make()\n"
        "    return model, tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "        sgd, 'dynamic')\n"
        "net, scaler = build()\nprint(scaler.loss_scale())\n"
    )
    text, findings = rewrite(before, target)
    assert text.endswith("print(scaler.loss_scale)\n")
    assert [(f.code, f.fixed) for f in findings if f.code == "LSO010"] == [("LSO010", True)]


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_reports_on_what_it_cannot_type_in_a_module_that_makes_one(target):
    before = NEW + "from trainer import build\nnet, scaler = build()\nprint(scaler.loss_scale())\n"
    text, findings = rewrite(before, target)
    assert text.endswith("print(scaler.loss_scale())\n")
    findings = [f for f in findings if f.code == "LSO010"]
    assert manual_codes(findings) == ["LSO010"]
    assert findings[0].line == 5
    assert "if scaler is a loss scale optimizer" in findings[0].message
    # The help is the target's: Keras 2's (and the shim's) class has the loss_scale property.
    assert ("dynamic_scale" in findings[0].help) == (target == "keras3")
    assert ("drop the call" in findings[0].help) == (target != "keras3")


def test_leaves_what_it_cannot_type_in_a_module_that_makes_none():
    before = "from trainer import build\nnet, scaler = build()\nprint(scaler.loss_scale())\n"
    assert not assert_unchanged(before, "keras2")


def test_rewrites_on_the_shims_experimental_class():
    before = (
        "import compat_lso\nopt = compat_lso.experimental.LossScaleOptimizer(sgd, scale)\n"
        "print(opt.loss_scale())\n"
    )
    assert_rewrites(before, before.replace("loss_scale()", "loss_scale"))


# Receivers the codemod cannot type, as the TF 2.1-2.3 trainers in tests/old_code/scripts/patterns/
# tf21/ write them: a callback's `self.model.optimizer` in a file that wraps its optimizer, and
# Horovod's `optimizer = model.optimizer` that get_scaled_loss is called on.
OLD = "import tensorflow as tf\n"
MAKES_ONE = OLD + "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, 'dynamic')\n"
UNTYPED = [
    pytest.param(
        MAKES_ONE + "s = float(self.model.optimizer.loss_scale())\n",
        "self.model.optimizer",
        id="compiles-optimizer-in-a-file-that-makes-one",
    ),
    pytest.param(
        OLD + "optimizer = model.optimizer\nloss = optimizer.get_scaled_loss(loss)\n"
        "s = float(optimizer.loss_scale())\n",
        "optimizer",
        id="the-receiver-of-get-scaled-loss",
    ),
]


@pytest.mark.parametrize(("before", "receiver"), UNTYPED)
@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_rewrites_a_receiver_known_by_its_use(before, receiver, target):
    text, findings = rewrite(before, target)
    assert f"s = float({receiver}.loss_scale)\n" in text
    assert "LSO010" in {f.code for f in findings if f.fixed}
    assert "LSO010" not in manual_codes(findings)


@pytest.mark.parametrize(("before", "receiver"), UNTYPED)
def test_keras3_reports_a_receiver_known_by_its_use(before, receiver):
    findings = [f for f in rewrite(before, "keras3")[1] if f.code == "LSO010"]
    assert manual_codes(findings) == ["LSO010"]
    assert findings[0].line == before.count("\n")


MIXED = OLD + "tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n"


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_reports_compiles_wrapper_in_a_file_that_makes_none(target):
    # compile() wraps under mixed_float16: on Keras 3 in Keras 3's own class unless
    # compat_lso.install() ran, so neither form is known to work.
    before = MIXED + "s = float(self.model.optimizer.loss_scale())\n"
    text, findings = rewrite(before, target)
    findings = [f for f in findings if f.code == "LSO010"]
    assert manual_codes(findings) == ["LSO010"]
    assert findings[0].line == before.count("\n")
    assert "loss_scale()" in text


def test_shim_rewrites_it_on_compiles_wrapper_once_install_makes_it_compat_lsos():
    # The policy set here: the shim target adds compat_lso.install() (LSO023), after which
    # compile()'s wrapper is compat_lso's class, whose loss_scale is TF 2.4's tensor.
    before = MIXED + "s = float(self.model.optimizer.loss_scale())\n"
    text, findings = rewrite(before, "shim")
    assert manual_codes(findings) == []
    assert "compat_lso.install()" in text
    assert "s = float(self.model.optimizer.loss_scale)\n" in text


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_noop_on_model_optimizer_without_mixed_precision(target):
    text, findings = rewrite(OLD + "s = model.optimizer.loss_scale()\n", target)
    assert "LSO010" not in {f.code for f in findings}
    assert "loss_scale()" in text
