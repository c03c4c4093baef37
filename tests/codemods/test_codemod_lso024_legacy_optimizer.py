"""LSO024: a Keras 2 legacy optimizer in mixed-precision code is reported on keras3 and shim.

Keras 3's `keras.optimizers.legacy` raises ImportError when one of its optimizers is built (TF
2.21: "`keras.optimizers.legacy` is not supported in Keras 3"), so the migrated program stops at
that line; issue 32 found `--target shim` silent there and `--target keras3` with only LSO022's
note. A call becomes Keras 3's class of the same name, with a note, where that is the same rule for
its arguments; the rest is reported (tf_keras where no Keras 3 class has the rule). Keras 2
(keras2 target) builds them as it always did. The two copies of the table (codemod, runtime) agree.
"""

import pytest

from codemods.apply.engine import migrate
from tests.codemods.codemod_cases import assert_unchanged

POLICY = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
WRAPPED = (
    "import tensorflow as tf\n"
    "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.legacy.{name}(0.1))\n"
)


def _legacy(findings):
    return [(f.line, f.col, f.message, f.help) for f in findings if f.code == "LSO024"]


def _manual(findings):
    return [
        (f.line, f.col, f.message, f.help) for f in findings if f.code == "LSO024" and not f.fixed
    ]


@pytest.mark.parametrize("target", ["keras3", "shim"])
@pytest.mark.parametrize(
    ("call", "rewritten", "note"),
    [
        ("SGD(0.1, 0.9, True)", "SGD(0.1, 0.9, True)", "the same update rule"),
        ("Adam(lr=1e-3, amsgrad=True)", "Adam(learning_rate=1e-3, amsgrad=True)", "last bits"),
        (
            "RMSprop(0.1, 0.9, 0.5, centered=True)",
            "RMSprop(0.1, 0.9, 0.5, centered=True)",
            "last bits",
        ),
        ("Adagrad(0.1)", "Adagrad(0.1)", "last bits"),
        (
            "Adagrad(initial_accumulator_value=2**-4)",
            "Adagrad(initial_accumulator_value=2**-4)",
            "last bits",
        ),
        ("Adadelta(1.0, clipnorm=1.0)", "Adadelta(1.0, clipnorm=1.0)", "the same update rule"),
        ("Adamax(epsilon=eps)", "Adamax(epsilon=eps)", "the same update rule"),
        (
            "Ftrl(0.1, -0.5, 0.1, 0.0, 0.0, l2_shrinkage_regularization_strength=0.1)",
            "Ftrl(0.1, -0.5, 0.1, 0.0, 0.0, l2_shrinkage_regularization_strength=0.1)",
            "the same update rule",
        ),
    ],
)
def test_a_call_with_keras_3s_rule_is_rewritten_with_a_note(target, call, rewritten, note):
    text = WRAPPED.replace("{name}(0.1)", call)
    result = migrate(text, target)
    assert f"tf.keras.optimizers.{rewritten})" in result.text
    assert ".legacy." not in result.text
    ((line, col, message, help_),) = [
        (f.line, f.col, f.message, f.help) for f in result.findings if f.code == "LSO024" and f.note
    ]
    assert (line, col) == (2, 51)
    assert note in message and "tf_keras with TF_USE_LEGACY_KERAS=1" in help_
    assert _manual(result.findings) == []


@pytest.mark.parametrize("target", ["keras3", "shim"])
@pytest.mark.parametrize(
    ("call", "fact", "help_word"),
    [
        ("Nadam(0.1)", "0.96**(0.004*step)", "tf_keras"),
        ("RMSprop(0.1)", "without momentum", "tf_keras"),
        ("RMSprop(momentum=m)", "without momentum", "tf_keras"),  # not known: not proven
        ("Adagrad(initial_accumulator_value=0.0)", "inside the square root", "tf_keras"),
        ("Adagrad(0.1, 1e-12, 1e-3)", "inside the square root", "tf_keras"),
        ("Adam(0.1, decay=1e-4)", "ignores decay", "InverseTimeDecay"),
        ("Adam(0.1, epsilon=None)", "backend's 1e-7", "epsilon=1e-7"),
        ("Adam(0.1, 0.9, 0.999, 1e-7, False, 'adam')", "name by keyword only", "name="),
        ("Adam(**settings)", "not known here", "tf_keras"),
        ("Adam(weight_decay=0.1)", "TF 2.15 refused (weight_decay)", "fix the call"),
        ("Adam(0.1, lr=0.2)", "both lr and learning_rate (TF 2.15 used lr)", "learning_rate="),
    ],
)
def test_a_call_without_keras_3s_rule_is_reported_at_its_line(target, call, fact, help_word):
    text = WRAPPED.replace("{name}(0.1)", call)
    result = migrate(text, target)
    ((line, col, message, help_),) = _manual(result.findings)
    assert (line, col) == (2, 51)
    assert message.startswith("tf.keras.optimizers.legacy.") and fact in message
    assert help_word in help_
    assert f"tf.keras.optimizers.legacy.{call})" in result.text


def test_nothing_to_do_on_keras2():
    assert _legacy(assert_unchanged(WRAPPED.format(name="Adam"), "keras2")) == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            "import tensorflow as tf\nopt = tf.keras.optimizers.legacy.Adam(0.1)\n",
            id="no-mixed-precision-in-the-module",
        ),
        pytest.param(POLICY + "opt = tf.keras.optimizers.Adam(0.1)\n", id="keras-3s-own-optimizer"),
        pytest.param(
            POLICY + "assert isinstance(o, tf.keras.optimizers.legacy.Optimizer)\n",
            id="the-base-class-is-only-checked-against",
        ),
        pytest.param(
            POLICY + "legacy = load()\nopt = legacy.Adam(0.1)\n", id="another-objects-legacy"
        ),
    ],
)
@pytest.mark.parametrize("target", ["keras3", "shim"])
def test_left_alone(text, target):
    assert _legacy(migrate(text, target).findings) == []


def test_suppressed_on_its_line():
    text = WRAPPED.format(name="Adam").replace("(0.1))\n", "(0.1))  # compat-lso: ignore[LSO024]\n")
    assert _legacy(migrate(text, "keras3").findings) == []


def test_the_codemods_table_agrees_with_the_runtimes():
    # Two copies (codemods never imports the shim's modules): the same classes, parameters,
    # closeness, keywords, defaults and bound.
    from codemods.table import legacy_optimizers as codemod
    from compat_lso.core import legacy_optimizers as runtime

    assert {
        name: (parameters, closeness)
        for name, (parameters, _, closeness) in codemod.LEGACY_EQUIVALENTS.items()
    } == runtime.LEGACY_OPTIMIZERS
    assert codemod.LEGACY_KEYWORDS == runtime.LEGACY_KEYWORDS
    assert codemod.LEGACY_DEFAULTS == runtime.DEFAULTS
    assert codemod.LEGACY_ADAGRAD_LAST_BITS == runtime.ADAGRAD_LAST_BITS
    assert {n: a for n, (a, _) in codemod.LEGACY_NOT_SAME.items()} == {
        n: a for n, (a, _) in runtime.NOT_SAME_BECAUSE.items()
    }
    assert (codemod.LEGACY_SAME, codemod.LEGACY_LAST_BITS, codemod.LEGACY_DIFFERENT) == (
        runtime.SAME,
        runtime.LAST_BITS,
        runtime.NOT_SAME,
    )
