"""LSO022: a note at each old-API loss scale optimizer that Keras 3's class runs after
--target keras3 (its dynamic rule differs by design); the other findings only point to it."""

import pytest

from codemods import table
from tests.codemods.codemod_cases import rewrite

LSO = "tf.keras.mixed_precision.LossScaleOptimizer"

NOTED = [
    pytest.param(f"import tensorflow as tf\nopt = {LSO}(sgd)\n", id="tf24-class-one-argument"),
    pytest.param(
        f"import tensorflow as tf\nopt = {LSO}(sgd, True, 1024, 500)\n",
        id="tf24-positional-rewritten-by-lso015",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, 'dynamic')\n",
        id="experimental-class-rewritten-by-lso001",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    sgd, tf.mixed_precision.experimental.DynamicLossScale(128))\n",
        id="experimental-dynamic-loss-scale-object",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, scale)\n",
        id="experimental-scale-only-known-at-run-time",
    ),
]
SILENT = [
    pytest.param(
        f"import tensorflow as tf\nopt = {LSO}(tf.keras.optimizers.SGD(), False, 128)\n",
        id="fixed-scale-becomes-loss-scale-factor-no-keras-3-class",
    ),
    # The experimental class's fixed scales: LSO001 writes loss_scale_factor (no Keras 3
    # LossScaleOptimizer, no dynamic rule), or reports the call it cannot rewrite.
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    tf.keras.optimizers.Adam(1e-2), loss_scale=512)\n",
        id="experimental-number-becomes-loss-scale-factor",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    tf.keras.optimizers.SGD(), tf.mixed_precision.experimental.FixedLossScale(64))\n",
        id="experimental-fixed-loss-scale-object",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, 512)\n",
        id="experimental-number-not-rewritten-reported",
    ),
    pytest.param(
        "import keras\nopt = keras.optimizers.LossScaleOptimizer(sgd)\n", id="keras-3-code"
    ),
    pytest.param(
        "import tf_keras\nopt = tf_keras.mixed_precision.LossScaleOptimizer(sgd)\n",
        id="tf-keras-keeps-keras-2",
    ),
    pytest.param(
        f"import tensorflow as tf\nopt = {LSO}(sgd)  # compat-lso: ignore\n", id="suppressed"
    ),
]


@pytest.mark.parametrize("before", NOTED)
def test_keras3_notes_each_optimizer_once(before):
    _, findings = rewrite(before, "keras3")
    (note,) = [f for f in findings if f.code == "LSO022"]
    assert note.note and note.fixed and note.line == 2
    assert "no floor at 1" in note.message and "`iterations`" in note.message
    assert "--explain LSO022" in note.help
    # The other findings point here rather than repeat it.
    for finding in findings:
        assert "no floor at 1 (it keeps halving" not in finding.message + finding.help


@pytest.mark.parametrize("before", NOTED + SILENT)
@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_tf24s_rule(before, target):
    assert "LSO022" not in {f.code for f in rewrite(before, target)[1]}


@pytest.mark.parametrize("before", SILENT)
def test_keras3_no_note(before):
    assert "LSO022" not in {f.code for f in rewrite(before, "keras3")[1]}


def test_the_rule_itself_is_said_once_in_the_table():
    assert "no floor at 1" in table.RULES_BY_CODE["LSO022"].details
    assert "no floor" not in table.KERAS3_BEHAVIOUR and "LSO022" in table.KERAS3_BEHAVIOUR


def test_experimental_fixed_scale_runs_no_keras3_class():
    """What makes the note untrue there: the output builds no LossScaleOptimizer at all."""
    before = (
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    tf.keras.optimizers.Adam(1e-2), loss_scale=512)\n"
    )
    after, findings = rewrite(before, "keras3")
    assert "loss_scale_factor=512" in after and "LossScaleOptimizer" not in after
    assert [f.code for f in findings] == ["LSO001"]
