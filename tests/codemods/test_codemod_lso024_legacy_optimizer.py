"""LSO024: a Keras 2 legacy optimizer in mixed-precision code is reported on keras3 and shim.

Keras 3's `keras.optimizers.legacy` raises ImportError when one of its optimizers is built (TF
2.21: "`keras.optimizers.legacy` is not supported in Keras 3"), so the migrated program stops at
that line; issue 32 found `--target shim` silent there and `--target keras3` with only LSO022's
note. Keras 2 (keras2 target) builds them as it always did.
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


@pytest.mark.parametrize("target", ["keras3", "shim"])
@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "Ftrl"])
def test_a_wrapped_legacy_optimizer_is_reported_at_its_line(target, name):
    ((line, col, message, help_),) = _legacy(migrate(WRAPPED.format(name=name), target).findings)
    assert (line, col) == (2, 51)
    assert message == (
        f"tf.keras.optimizers.legacy.{name}: Keras 3 builds no legacy optimizer (ImportError)"
    )
    assert help_ == (
        f"use tf.keras.optimizers.{name} (last bits may differ), or tf_keras with "
        "TF_USE_LEGACY_KERAS=1"
    )


@pytest.mark.parametrize(
    ("text", "where"),
    [
        pytest.param(
            POLICY + "from tensorflow.keras.optimizers.legacy import Adam\nmodel.compile(Adam())\n",
            [(4, 15)],
            id="imported-name-under-a-policy",
        ),
        pytest.param(
            POLICY + "from tensorflow.keras.optimizers import legacy\nopt = legacy.SGD(0.1)\n",
            [(4, 7)],
            id="the-legacy-module-imported",
        ),
        pytest.param(
            POLICY
            + "import keras\nopt_class = keras.optimizers.legacy.RMSprop\nopt = opt_class()\n",
            [(4, 13), (5, 7)],  # where it is named, and where it is built
            id="keras-spelling-held-as-a-value",
        ),
    ],
)
def test_every_form_of_reference_is_reported(text, where):
    for target in ("keras3", "shim"):
        assert [(line, col) for line, col, _, _ in _legacy(migrate(text, target).findings)] == where


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
