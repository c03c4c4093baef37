"""LSO021: apply_gradients on a loss scale optimizer given gradients the codemod cannot follow.

On keras3 each gradient is scaled back at the apply_gradients line (Keras 3 divides, Keras 2
applied them as given); the finding states what the analysis saw: the call or parameter the
gradients come from, or the loss it could not decide. Where the scale-back cannot be written,
the finding stays manual.
"""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

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


def _scaled_back(text: str, grads: str, receiver: str = "opt") -> str:
    each = (
        f"None if grad is None else tf.math.scalar_mul(tf.cast({receiver}.scale_loss(1.0), "
        "grad.dtype), grad)"
    )
    return text.replace(f"zip({grads}, ", f"zip([{each} for grad in {grads}], ")


GRADS = ["grads", "grads", "grads", f"tape.gradient(loss, {V})", "grads"]


SCALED_BACK = [
    pytest.param(*case.values, grads, id=case.id)
    for case, grads in zip(REPORTS, GRADS, strict=True)
]


@pytest.mark.parametrize(("before", "seen", "grads"), SCALED_BACK)
def test_keras3_scales_back_at_the_apply_gradients_line(before, seen, grads):
    # Keras 2 applied the gradients as given, whatever they are; Keras 3 divides by its scale:
    # times opt.scale_loss(1.0) there keeps TF 2.15's numbers without knowing where they come
    # from (test_codemod_lso011_explicit_unscaling.py's trajectories show it).
    after = _scaled_back(before, grads)
    assert after != before
    findings = assert_rewrites(before, after, "keras3")
    (finding,) = [f for f in findings if f.code == "LSO021" and not f.note]
    assert finding.fixed
    assert finding.line == next(
        n for n, line in enumerate(before.splitlines(), 1) if "apply_gradients" in line
    )
    assert "scaled back by opt.scale_loss(1.0)" in finding.message and not finding.help
    # (the branch case keeps LSO011's finding at its get_scaled_loss, and says so at the apply)
    assert "LSO021" not in manual_codes(findings)
    # The step now runs Keras 3's rule: said at the training call, not only at the constructor
    # (tests/old_code/scripts/tf24/dynamic_trajectory.py reaches Keras 2's floor and cap).
    rule = [f.line for f in findings if f.code == "LSO022" and f.note]
    assert finding.line in rule


def test_a_scale_back_says_which_manual_lso011_calls_would_undo_it():
    before = str(REPORTS[-1].values[0])
    findings = rewrite(before, "keras3")[1]
    (note,) = [f for f in findings if f.code == "LSO021" and f.note]
    assert note.line == 9 and "LSO011 at line 6" in note.message
    assert manual_codes(findings) == ["LSO011"]


def test_a_scale_back_of_a_scale_not_a_power_of_two_says_so():
    fixed = "SGD(), dynamic=False, initial_scale=1000)"
    before = str(REPORTS[1].values[0]).replace("SGD())", fixed)
    findings = rewrite(before, "keras3")[1]
    assert any(
        f.code == "LSO021" and f.note and "only for a power-of-two scale" in f.message
        for f in findings
    )


KEPT = [
    pytest.param(
        HEAD + "def apply(trainer, grads):\n"
        f"    trainer.get().optimizer.apply_gradients(zip(grads, {V}))\n",
        id="a-receiver-with-a-call-would-be-called-twice",
    ),
    pytest.param(
        HEAD + f"def apply(grads):\n    opt.apply_gradients(zip(grads, {V}), 1.0)\n",
        id="a-second-positional-argument-keras-3-does-not-take",
    ),
    pytest.param(
        HEAD + f"def apply(grads):\n    opt.apply_gradients(zip(grads, {V}), name='step')\n",
        id="a-name-keras-3-does-not-take",
    ),
    pytest.param(
        HEAD + "sgd = tf.compat.v1.train.GradientDescentOptimizer(0.1)\n"
        f"def apply(optimizer, grads):\n    optimizer.apply_gradients(zip(grads, {V}))\n",
        id="a-receiver-that-may-hold-a-compat-v1-optimizer-has-no-scale-loss",
    ),
    pytest.param(
        HEAD + "import tensorflow_addons as tfa\nlazy = tfa.optimizers.LazyAdam()\n"
        f"def apply(optimizer, grads):\n    optimizer.apply_gradients(zip(grads, {V}))\n",
        id="a-receiver-that-may-hold-a-tensorflow-addons-optimizer",
    ),
]


@pytest.mark.parametrize("before", KEPT)
def test_keras3_reports_where_it_cannot_scale_back(before):
    findings = assert_unchanged(before, "keras3")
    (finding,) = [f for f in findings if f.code == "LSO021"]
    assert not finding.fixed and "not known if gradients of a scaled loss" in finding.message
    assert "opt.scale_loss(1.0)" in finding.help


def test_an_apply_the_drop_both_rewrite_left_scaled_is_not_scaled_back():
    # There Keras 3's division is what unscales: scaling back would apply gradients * scale.
    before = HEAD + (
        "def step(x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = opt.get_scaled_loss(model(x))\n"
        f"    grads = opt.get_unscaled_gradients(tape.gradient(loss, {V}))\n"
        f"    opt.apply_gradients(zip(grads, {V}))\n"
    )
    text, findings = rewrite(before, "keras3")
    assert "opt.scale_loss(model(x))" in text and "get_unscaled_gradients" not in text
    assert "scale_loss(1.0)" not in text
    assert "LSO021" not in {f.code for f in findings}


def test_a_receiver_built_here_is_scaled_back_beside_a_compat_v1_optimizer():
    before = HEAD + (
        "sgd = tf.compat.v1.train.GradientDescentOptimizer(0.1)\n"
        f"def apply(grads):\n    opt.apply_gradients(zip(grads, {V}))\n"
    )
    assert_rewrites(before, _scaled_back(before, "grads"), "keras3")


@pytest.mark.parametrize(("before", "seen"), REPORTS)
@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_keras2s_meaning(before, seen, target):
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
    text, findings = rewrite(ACCUMULATED, "keras3")
    assert "self._opt.scale_loss(1.0), grad.dtype), grad) for grad in self._acc.gradients" in text
    assert manual_codes(findings) == []


def test_lso021_scales_back_alone_where_lso011_is_not_run():
    from codemods import table

    enabled = set(table.RULES_BY_CODE) - {"LSO011"}
    text, findings = rewrite(ACCUMULATED, "keras3", enabled=enabled)
    assert "self._opt.scale_loss(1.0), grad.dtype), grad) for grad in self._acc.gradients" in text
    assert "get_unscaled_gradients" in text  # LSO011's own calls untouched
    (finding,) = [f for f in findings if f.code == "LSO021" and not f.note]
    assert finding.fixed and finding.line == 11
