"""LSO019's rewrite of Keras 2's private `opt._decayed_lr(dtype)` on keras3.

NVIDIA's BERT trainer (tests/codemods/forms/README.md) logs
`optimizer._optimizer._decayed_lr('float32')`. Keras 3's `learning_rate` is the same value, a
schedule evaluated at the optimizer's iterations (tests/old_code/test_decayed_lr.py checks both
against hand-worked values): the call becomes `tf.cast(opt.learning_rate, dtype)`, with Keras 2's
private `_optimizer` written `inner_optimizer`. --target shim keeps reporting it: its code also
runs on Keras 2, where a legacy optimizer's `learning_rate` is the schedule itself and tf.cast
refuses it.
"""

import ast

import pytest

from codemods import table
from tests.codemods.codemod_cases import assert_unchanged, manual_codes, rewrite

TF = "import tensorflow as tf\n"
LSO = TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
MIXED = TF + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
SELF_OPTIMIZER = TF + (
    "class Trainer:\n"
    "    def __init__(self, optimizer):\n"
    "        self._optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)\n"
    "    def log(self):\n"
)

REWRITES = [
    pytest.param(
        MIXED + "optimizer = model.optimizer\n"
        "logging.info('Lr %g' % optimizer._optimizer._decayed_lr('float32'))\n",
        "logging.info('Lr %g' % tf.cast(optimizer.inner_optimizer.learning_rate, 'float32'))\n",
        id="bert-inner-optimizer-of-compiles-wrapper",
    ),
    pytest.param(
        LSO + "lr = opt._decayed_lr(tf.float32)\n",
        "lr = tf.cast(opt.learning_rate, tf.float32)\n",
        id="on-the-loss-scale-optimizer-a-dtype",
    ),
    pytest.param(
        LSO + "lr = opt._optimizer._decayed_lr(var_dtype=dtype)\n",
        "lr = tf.cast(opt.inner_optimizer.learning_rate, dtype)\n",
        id="keyword-dtype",
    ),
    pytest.param(
        SELF_OPTIMIZER + "        return self._optimizer._decayed_lr('float32')\n",
        "        return tf.cast(self._optimizer.learning_rate, 'float32')\n",
        id="a-trainers-own-optimizer-attribute-is-not-keras-2s-private-one",
    ),
]


@pytest.mark.parametrize(("before", "line"), REWRITES)
def test_rewritten_to_a_cast_of_keras_3s_learning_rate(before, line):
    text, findings = rewrite(before, "keras3")
    assert text.endswith(line)
    ast.parse(text)
    assert rewrite(text, "keras3")[0] == text, "a second run must change nothing"
    (finding,) = [f for f in findings if f.code == "LSO019"]
    assert (finding.fixed, finding.note, finding.line) == (True, False, before.count("\n"))
    assert "decay=" in finding.help  # what the rewrite leaves to check


REPORTED = [
    pytest.param(
        TF + "loss = opts[0].get_scaled_loss(loss)\nlr = opts[0]._decayed_lr('float32')\n",
        id="subscript-receiver",
    ),
    pytest.param(LSO + "lr = opt._decayed_lr()\n", id="no-dtype"),
    pytest.param(LSO + "lr = opt._decayed_lr('float32', 1)\n", id="two-arguments"),
    pytest.param(LSO + "f = opt._decayed_lr\n", id="not-called"),
    pytest.param(
        "from tensorflow.keras import mixed_precision\n"
        "opt = mixed_precision.LossScaleOptimizer(sgd)\n"
        "lr = opt._decayed_lr('float32')\n",
        id="no-name-for-tensorflow-to-write-tf-cast-with",
    ),
]


@pytest.mark.parametrize("before", REPORTED)
def test_reported_where_it_cannot_be_rewritten(before):
    _assert_reported(before, "keras3")


@pytest.mark.parametrize("before", [case.values[0] for case in REWRITES])
def test_reported_on_the_shim_which_also_runs_on_keras_2(before):
    _assert_reported(before, "shim")


def _assert_reported(before, target):
    text, findings = rewrite(before, target)
    assert "._decayed_lr" in text and "learning_rate" not in text
    lso019 = [f for f in findings if f.code == "LSO019"]
    assert manual_codes(lso019) == ["LSO019"]
    assert lso019[0].help == table.SURFACE_REFUSED["_decayed_lr"]
    assert "tf.cast(opt.learning_rate, dtype)" in lso019[0].help


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(REWRITES[0].values[0], id="bert"),
        pytest.param(LSO + "lr = opt._decayed_lr(tf.float32)\n", id="loss-scale-optimizer"),
    ],
)
def test_keras2_keeps_it(before):
    # Keras 2's legacy optimizers (and its LossScaleOptimizer) have _decayed_lr.
    assert "LSO019" not in {f.code for f in assert_unchanged(before, "keras2")}


@pytest.mark.parametrize("target", table.TARGETS)
def test_noop(target):
    for before in (
        LSO + "lr = opt._decayed_lr('float32')  # compat-lso: ignore[LSO019]\n",
        LSO + "def f(schedule):\n    return schedule._decayed_lr('float32')\n",
    ):
        text, findings = rewrite(before, target)
        assert "._decayed_lr('float32')" in text
        assert "LSO019" not in {f.code for f in findings}
