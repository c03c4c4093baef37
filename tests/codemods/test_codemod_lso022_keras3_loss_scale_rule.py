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


# -- a step run per replica (issue 32): Keras 3's class cannot run it ------------------------------

OFFICIAL_LOOP = f"""\
import tensorflow as tf
strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    optimizer = {LSO}(tf.keras.optimizers.SGD(0.1))
def train_step(iterator):
    def step_fn(inputs):
        with tf.GradientTape() as tape:
            loss = compute(inputs)
            scaled_loss = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, tvars))
        optimizer.apply_gradients(zip(grads, tvars))
        return loss
    return strategy.run(step_fn, args=(next(iterator),))
"""

PER_REPLICA = [
    pytest.param(OFFICIAL_LOOP, 11, id="tf-official-models-nested-step-fn"),
    pytest.param(
        OFFICIAL_LOOP.replace(
            "        optimizer.apply_gradients(zip(grads, tvars))\n",
            "        optimizer.apply_gradients(zip(grads, tvars))\n"
            "        optimizer.apply_gradients(zip(grads, tvars))\n",
        ),
        11,
        id="one-finding-a-step-where-it-fails-first",
    ),
    pytest.param(
        OFFICIAL_LOOP.replace("strategy.run(", "strategy.experimental_run_v2("),
        11,
        id="tf-2.1-experimental-run-v2",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "class Trainer:\n"
        "    def __init__(self, strategy):\n"
        "        self.strategy = strategy\n"
        f"        self.opt = {LSO}(tf.keras.optimizers.SGD(0.1))\n"
        "    def _replica_step(self, x):\n"
        "        self.opt.apply_gradients(zip(grads(x), tvars))\n"
        "    @tf.function\n"
        "    def step(self, x):\n"
        "        self.strategy.run(self._replica_step, args=(x,))\n",
        7,
        id="a-method-on-an-attribute-stored-optimizer",
    ),
]


@pytest.mark.parametrize(("before", "line"), PER_REPLICA)
def test_keras3_reports_a_step_a_strategy_runs_per_replica(before, line):
    _, findings = rewrite(before, "keras3")
    reported = [f for f in findings if f.code == "LSO022" and not f.note]
    assert [(f.line, f.fixed) for f in reported] == [(line, False)]
    assert "fails on Keras 3's class with 2+ replicas" in reported[0].message
    assert "--target shim" in reported[0].help


# compile()'s own wrapping, where the file builds no loss scale optimizer: the forms of
# tests/old_code/scripts/patterns/fit_policy_schedule_adam.py, fit_policy_warmup_callback.py and
# train_on_batch_policy_decay.py (and their tf21/ twins), whose numbers change on Keras 3.
POLICY = "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
COMPILED = "model = build()\nmodel.compile(optimizer='adam', loss='mse')\nmodel.fit(x, y)\n"
COMPILE_NOTED = [
    pytest.param(f"import tensorflow as tf\n{POLICY}{COMPILED}", 4, id="policy-then-compile"),
    pytest.param(
        "import tensorflow as tf\n"
        "tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n" + COMPILED,
        4,
        id="tf21-set-policy",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "def setup(name):\n"
        "    tf.keras.mixed_precision.set_global_policy(name)\n" + COMPILED,
        5,
        id="a-policy-known-at-run-time",
    ),
    pytest.param(f"import tensorflow as tf\n{POLICY}", 2, id="no-compile-here-at-the-policy"),
]


@pytest.mark.parametrize(("before", "line"), COMPILE_NOTED)
def test_keras3_notes_compiles_own_wrapping(before, line):
    _text, findings = rewrite(before, "keras3")
    (note,) = [f for f in findings if f.code == "LSO022"]
    assert (note.line, note.note) == (line, True)
    assert note.message == (
        "compile() wraps in Keras 3's class: skipped steps not in `iterations` (0 before Keras 3.9)"
    )
    assert "--target shim" in note.help


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            OFFICIAL_LOOP.replace(
                "strategy.run(step_fn, args=(next(iterator),))", "step_fn(next(iterator))"
            ),
            id="no-strategy",
        ),
        pytest.param(
            OFFICIAL_LOOP.replace("strategy.run(", "runner.run("), id="a-run-of-something-else"
        ),
        pytest.param(
            OFFICIAL_LOOP.replace(
                f"{LSO}(tf.keras.optimizers.SGD(0.1))", "tf.keras.optimizers.SGD()"
            )
            .replace("optimizer.get_scaled_loss(loss)", "loss")
            .replace("optimizer.get_unscaled_gradients(", "("),
            id="a-plain-optimizer",
        ),
    ],
)
def test_keras3_leaves_a_step_not_run_per_replica_through_a_loss_scale_optimizer(before):
    _, findings = rewrite(before, "keras3")
    assert not [f for f in findings if f.code == "LSO022" and not f.note]


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_run_a_step_per_replica(target):
    _, findings = rewrite(OFFICIAL_LOOP, target)
    assert not [f for f in findings if f.code == "LSO022"]


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            f"import tensorflow as tf\n{POLICY.replace('mixed_float16', 'float32')}" + COMPILED,
            id="float32",
        ),
        pytest.param(f"import tensorflow as tf\n{COMPILED}", id="no-policy"),
        pytest.param(
            f"import tensorflow as tf\n{POLICY}opt = {LSO}(sgd)\nmodel.compile(optimizer=opt)\n",
            id="the-file-builds-its-loss-scale-optimizer-noted-there",
        ),
        pytest.param(
            "import tf_keras\ntf_keras.mixed_precision.set_global_policy('mixed_float16')\n"
            + COMPILED,
            id="tf-keras-keeps-keras-2",
        ),
    ],
)
def test_keras3_no_compile_note(before):
    _, findings = rewrite(before, "keras3")
    assert [f.line for f in findings if f.code == "LSO022" and "compile()" in f.message] == []


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
