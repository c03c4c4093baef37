"""LSO021: apply_gradients on a loss scale optimizer given gradients the codemod cannot follow.

On keras3 the finding sits at the apply_gradients line and states only what the analysis saw:
the call or parameter the gradients come from, or the loss it could not decide.
"""

import pytest

from tests.codemods.codemod_cases import assert_unchanged, manual_codes

HEAD = (
    "import tensorflow as tf\n"
    "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
)
V = "model.trainable_variables"

REPORTS = [
    pytest.param(
        HEAD + "grads = []\n"
        "for part in parts:\n"
        "    grads.append(tf.cast(strategy.experimental_local_results(part)[0], tf.float32))\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        "from `strategy.experimental_local...`",
        id="a-list-grown-by-append-from-a-call-not-followed",
    ),
    pytest.param(
        HEAD + "from trainer import compute_gradients\n"
        "grads = compute_gradients(model, x)\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        "from `compute_gradients(model, x)`",
        id="gradients-from-another-module",
    ),
    pytest.param(
        HEAD + f"def apply(grads):\n    opt.apply_gradients(zip(grads, {V}))\n",
        "the parameter `grads` of apply()",
        id="a-parameter-no-call-in-this-file-gives",
    ),
    pytest.param(
        HEAD + "def step(x, loss_fn):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = loss_fn(opt, x)\n"
        f"    opt.apply_gradients(zip(tape.gradient(loss, {V}), {V}))\n",
        "the loss `loss` at line 6",
        id="a-loss-computed-by-a-call-handed-the-optimizer",
    ),
    pytest.param(
        HEAD + "with tf.GradientTape() as tape:\n"
        "    loss = model(x)\n"
        "    if fp16:\n"
        "        loss = opt.get_scaled_loss(loss)\n"
        f"grads = tape.gradient(loss, {V})\n"
        "def later():\n"
        f"    opt.apply_gradients(zip(grads, {V}))\n",
        "the loss `loss` at line 7",
        id="a-loss-scaled-on-one-branch-only",
    ),
]


@pytest.mark.parametrize(("before", "seen"), REPORTS)
def test_keras3_reports_what_was_seen_at_the_apply_gradients_line(before, seen):
    findings = assert_unchanged(before, "keras3")
    # (the branch case also has LSO011's finding at its get_scaled_loss)
    (finding,) = [f for f in findings if f.code == "LSO021"]
    assert not finding.fixed and manual_codes(findings)[-1] == "LSO021"
    assert (
        finding.line
        == before.splitlines().index(
            next(line for line in before.splitlines() if "apply_gradients" in line)
        )
        + 1
    )
    assert seen in finding.message, finding.message
    assert "not known if gradients of a scaled loss" in finding.message
    assert "opt.scale_loss(loss)" in finding.help


@pytest.mark.parametrize(("before", "seen"), REPORTS)
@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_keras2s_meaning(before, seen, target):
    from tests.codemods.codemod_cases import rewrite

    assert "LSO021" not in {f.code for f in rewrite(before, target)[1]}


def test_keras3_code_is_left_alone():
    before = (
        "import keras\nopt = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD())\n"
        "grads = compute_gradients(model, x)\n"
        f"opt.apply_gradients(zip(grads, {V}))\n"
    )
    assert not assert_unchanged(before, "keras3")


# TensorFlowTTS's base_trainer.py: the apply_gradients of accumulated gradients sits in a method
# with no scaling of its own, so this rule alone cannot follow them; LSO011's optimizer-wide
# rewrite scales back there (test_codemod_lso011_optimizer_wide.py), and then nothing is left
# to report. With LSO011 off, nothing is rewritten and the finding stays.
ACCUMULATED = (
    "import tensorflow as tf\n"
    "class Trainer:\n"
    "    def __init__(self, opt):\n"
    "        self._opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
    "        self._acc = GradientAccumulator()\n"
    "    def _accumulate(self, x):\n"
    "        with tf.GradientTape() as tape:\n"
    "            scaled = self._opt.get_scaled_loss(self.model(x))\n"
    "        self._acc(self._opt.get_unscaled_gradients(tape.gradient(scaled, self.variables)))\n"
    "    def step(self):\n"
    "        self._opt.apply_gradients(zip(self._acc.gradients, self.variables))\n"
)


def test_no_finding_at_an_apply_gradients_lso011_rewrote():
    from tests.codemods.codemod_cases import rewrite

    text, findings = rewrite(ACCUMULATED, "keras3")
    assert "self._opt.scale_loss(1.0), grad.dtype), grad) for grad in self._acc.gradients" in text
    assert manual_codes(findings) == []


def test_the_finding_stays_where_lso011_is_not_run():
    from codemods import table
    from tests.codemods.codemod_cases import rewrite

    enabled = set(table.RULES_BY_CODE) - {"LSO011"}
    text, findings = rewrite(ACCUMULATED, "keras3", enabled=enabled)
    assert "scale_loss(1.0)" not in text
    (finding,) = [f for f in findings if f.code == "LSO021"]
    assert finding.line == 11 and "self._acc.gradients" in finding.message
