"""LSO020: gradients of an unscaled loss reaching a loss scale optimizer's apply_gradients.

Keras 2's apply_gradients applies them as given; Keras 3's divides them by the loss scale. The
shapes are those of real "wrap-only" loops: a plain tape, Horovod's DistributedGradientTape, a
train_step on self.optimizer, gradients returned by a tf.function or strategy.run, clipping,
accumulation, a helper that applies. keras3 scales the loss in the tape where that is exact and
reports the rest at the apply_gradients line; shim notes it; keras2 has nothing to do.
"""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

HEAD = (
    "import tensorflow as tf\n"
    "import horovod.tensorflow as hvd\n"
    "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
)
V = "model.trainable_variables"

REWRITES = [
    pytest.param(
        HEAD + "@tf.function\n"
        "def step(x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = model(x)\n"
        "    tape = hvd.DistributedGradientTape(tape)\n"
        f"    grads = tape.gradient(loss, {V})\n"
        f"    opt.apply_gradients(zip(grads, {V}))\n",
        HEAD + "@tf.function\n"
        "def step(x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = model(x)\n"
        "        scaled_loss = opt.scale_loss(loss)\n"
        "    tape = hvd.DistributedGradientTape(tape)\n"
        f"    grads = tape.gradient(scaled_loss, {V})\n"
        f"    opt.apply_gradients(zip(grads, {V}))\n",
        id="horovod-tape-loss-scaled-inside-the-with-block",
    ),
    pytest.param(
        HEAD + "class M(tf.keras.Model):\n"
        "    def train_step(self, data):\n"
        "        x, y = data\n"
        "        with tf.GradientTape() as tape:\n"
        "            loss = self.compiled_loss(y, self(x, training=True))\n"
        "        gradients = tape.gradient(loss, self.trainable_variables)\n"
        "        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))\n"
        "        return {'loss': loss}\n",
        HEAD + "class M(tf.keras.Model):\n"
        "    def train_step(self, data):\n"
        "        x, y = data\n"
        "        with tf.GradientTape() as tape:\n"
        "            loss = self.compiled_loss(y, self(x, training=True))\n"
        "            scaled_loss = self.optimizer.scale_loss(loss)\n"
        "        gradients = tape.gradient(scaled_loss, self.trainable_variables)\n"
        "        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))\n"
        "        return {'loss': loss}\n",
        id="train-step-on-self-optimizer-in-a-file-that-builds-one",
    ),
    pytest.param(
        HEAD + "with tf.GradientTape() as tape:\n"
        "    loss = model(x)\n"
        f"    grads = tape.gradient(loss, {V})\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        HEAD + "with tf.GradientTape() as tape:\n"
        "    loss = model(x)\n"
        f"    grads = tape.gradient(opt.scale_loss(loss), {V})\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        id="gradient-taken-while-the-tape-records-scaled-in-place",
    ),
    pytest.param(
        HEAD + "scaled_loss = None\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = model(x)\n"
        f"pairs = list(zip(tape.gradient(loss, {V}), {V}))\n"
        "opt.apply_gradients(pairs)\n",
        HEAD + "scaled_loss = None\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = model(x)\n"
        "    scaled_loss_2 = opt.scale_loss(loss)\n"
        f"pairs = list(zip(tape.gradient(scaled_loss_2, {V}), {V}))\n"
        "opt.apply_gradients(pairs)\n",
        id="through-a-pairs-name-and-a-fresh-name-when-scaled-loss-is-taken",
    ),
    pytest.param(
        HEAD + "scaled_loss = scaled_loss_2 = None\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = model(x)\n"
        f"grads = tape.gradient(loss, {V})\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        HEAD + "scaled_loss = scaled_loss_2 = None\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = model(x)\n"
        "    scaled_loss_3 = opt.scale_loss(loss)\n"
        f"grads = tape.gradient(scaled_loss_3, {V})\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        id="the-next-fresh-name-when-the-first-two-are-taken",
    ),
    pytest.param(
        HEAD + "from tensorflow import GradientTape\n"
        "with GradientTape() as tape:\n"
        "    loss = model(x)\n"
        f"grads = tape.gradient(loss, {V})\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        HEAD + "from tensorflow import GradientTape\n"
        "with GradientTape() as tape:\n"
        "    loss = model(x)\n"
        "    scaled_loss = opt.scale_loss(loss)\n"
        f"grads = tape.gradient(scaled_loss, {V})\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        id="gradient-tape-imported-by-name",
    ),
    pytest.param(
        HEAD + "def step(x):\n"
        "    with lock:\n"
        "        pass\n"
        "    with strategy.scope():\n"
        "        pass\n"
        "    with tf.GradientTape() as disc_tape:\n"
        "        d_loss = disc(x)\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = model(x)\n"
        f"    grads = tape.gradient(loss, {V})\n"
        f"    opt.apply_gradients(zip(grads, {V}))\n",
        HEAD + "def step(x):\n"
        "    with lock:\n"
        "        pass\n"
        "    with strategy.scope():\n"
        "        pass\n"
        "    with tf.GradientTape() as disc_tape:\n"
        "        d_loss = disc(x)\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = model(x)\n"
        "        scaled_loss = opt.scale_loss(loss)\n"
        f"    grads = tape.gradient(scaled_loss, {V})\n"
        f"    opt.apply_gradients(zip(grads, {V}))\n",
        id="the-tapes-own-with-block-among-others-in-the-function",
    ),
]

_TAPE = "with tf.GradientTape() as tape:\n    loss = model(x)\n"
REPORTS = [
    pytest.param(
        HEAD + "grads = []\n"
        "for x in batches:\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = model(x)\n"
        f"    grads.append(tape.gradient(loss, {V}))\n"
        f"opt.apply_gradients(zip(grads[-1], {V}))\n",
        "more than names and zip",
        id="gradients-collected-with-append",
    ),
    pytest.param(
        HEAD + _TAPE + f"grads = tape.gradient(loss, {V})\n"
        "grads, _ = tf.clip_by_global_norm(grads, 1.0)\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        "more than names and zip",
        id="clipping-between-would-see-scaled-gradients",
    ),
    pytest.param(
        HEAD + _TAPE + f"grads = tape.gradient(loss, {V})\n"
        "grads = [tf.clip_by_norm(g, 1.0) for g in grads]\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        "more than names and zip",
        id="clipping-in-a-list-comprehension",
    ),
    pytest.param(
        HEAD + "@tf.function\n"
        "def compute(x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = model(x)\n"
        f"    return loss, tape.gradient(loss, {V})\n"
        "loss, grads = compute(x)\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        "(line 8)",
        id="gradients-returned-by-a-tf-function",
    ),
    pytest.param(
        HEAD + "def replica_step(x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = model(x)\n"
        f"    return tape.gradient(loss, {V})\n"
        "grads = strategy.run(replica_step, args=(x,))\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        "(line 7)",
        id="gradients-returned-through-strategy-run",
    ),
    pytest.param(
        HEAD + f"accum = [tf.zeros_like(v) for v in {V}]\n"
        "for x in data:\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = model(x)\n"
        f"    grads = tape.gradient(loss, {V})\n"
        "    accum = [a + g for a, g in zip(accum, grads)]\n"
        f"opt.apply_gradients(zip([a / 4 for a in accum], {V}))\n",
        "more than names and zip",
        id="gradient-accumulation-over-a-loop",
    ),
    pytest.param(
        HEAD + "def apply(grads):\n"
        f"    opt.apply_gradients(zip(grads, {V}))\n"
        + _TAPE
        + f"apply(tape.gradient(loss, {V}))\n",
        "more than names and zip",
        id="applied-by-a-helper-given-the-gradients",
    ),
    pytest.param(
        HEAD + _TAPE + f"grads = tape.gradient(loss, {V})\n"
        "tf.print(tf.linalg.global_norm(grads))\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        "`grads` (line 6) is read elsewhere too",
        id="gradients-also-logged-would-see-scaled-values",
    ),
    pytest.param(
        HEAD + f"grads = tf.gradients(model(x), {V})\nopt.apply_gradients(zip(grads, {V}))\n",
        "is not `<tape>.gradient(loss, ...)`",
        id="tf-gradients-has-no-tape-to-scale-in",
    ),
]

NOOPS = [
    pytest.param(
        HEAD + "def compute(x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = opt.get_scaled_loss(model(x))\n"
        f"    return opt.get_unscaled_gradients(tape.gradient(loss, {V}))\n"
        "grads = compute(x)\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        id="unscaled-by-the-code-in-a-helper-is-lso011s",
    ),
    pytest.param(
        HEAD + "with tf.GradientTape() as tape:\n"
        "    loss = opt.get_scaled_loss(model(x))\n"
        f"grads = opt.get_unscaled_gradients(tape.gradient(loss, {V}))\n"
        f"opt.apply_gradients(zip(grads, {V}))\n",
        id="manual-pattern-is-lso011s",
    ),
    pytest.param(
        "import tensorflow as tf\nopt = tf.keras.optimizers.SGD()\n"
        + _TAPE
        + f"opt.apply_gradients(zip(tape.gradient(loss, {V}), {V}))\n",
        id="no-loss-scale-optimizer-in-the-file",
    ),
    pytest.param(
        "import tf_keras\nopt = tf_keras.mixed_precision.LossScaleOptimizer(sgd)\n"
        + _TAPE
        + f"opt.apply_gradients(zip(tape.gradient(loss, {V}), {V}))\n",
        id="tf-keras-keeps-keras-2s-apply-gradients",
    ),
    pytest.param(
        HEAD + _TAPE + f"grads = tape.gradient(loss, {V})\n"
        f"opt.apply_gradients(zip(grads, {V}))  # compat-lso: ignore[LSO020]\n",
        id="suppressed",
    ),
]


def _apply_line(text):
    return next(i for i, line in enumerate(text.splitlines(), 1) if ".apply_gradients(" in line)


def _gradient_line(text):
    """Where the gradients of the unscaled loss are taken: the line a finding names."""
    lines = enumerate(text.splitlines(), 1)
    return next(i for i, line in lines if ".gradient(" in line or "tf.gradients(" in line)


@pytest.mark.parametrize(("before", "after"), REWRITES)
def test_keras3_scales_the_loss_in_the_tape(before, after):
    findings = assert_rewrites(before, after, "keras3")
    (fix, note) = sorted((f for f in findings if f.code == "LSO020"), key=lambda f: f.note)
    assert fix.fixed and not fix.note
    assert fix.line == _apply_line(before)
    assert "unscaled loss `loss`" in fix.message and "now scaled in the tape" in fix.message
    assert f"(line {_gradient_line(before)})" in fix.message
    # The rewrite changes the numbers where the scaled gradients overflow float16 (Keras 3 then
    # skips the step): a note at its line, printed in write mode too, one short line.
    assert note.note and note.line == fix.line
    assert note.message == (
        "the loss was never scaled; it now is: early steps may be skipped while the scale "
        "settles, so they differ from TF 2.15"
    )


@pytest.mark.parametrize(("before", "reason"), REPORTS)
def test_keras3_reports_at_the_apply_gradients_line(before, reason):
    findings = assert_unchanged(before, "keras3")
    assert manual_codes(findings) == ["LSO020"]
    (finding,) = [f for f in findings if f.code == "LSO020"]
    assert finding.line == _apply_line(before)
    assert reason in finding.message, finding.message
    assert "gets gradients of the unscaled loss" in finding.message
    assert "opt.scale_loss(loss)" in finding.help  # the fix, on its own line


@pytest.mark.parametrize("before", [p.values[0] for p in REWRITES + REPORTS])
def test_shim_notes_the_reliance_on_keras2s_apply_gradients(before):
    text, findings = rewrite(before, "shim")
    (note,) = [f for f in findings if f.code == "LSO020"]
    assert note.note and note.fixed and note.line == _apply_line(before)
    assert note.message.endswith(", kept as written")
    assert "compat_lso's class applies the gradients as given" in note.help
    assert f"(line {_gradient_line(before)})" in note.message
    assert "compat_lso.LossScaleOptimizer(" in text  # LSO015 moves the class


def test_the_shim_note_in_full():
    before = (
        HEAD + _TAPE + f"grads = tape.gradient(loss, {V})\nopt.apply_gradients(zip(grads, {V}))\n"
    )
    (note,) = [f for f in rewrite(before, "shim")[1] if f.code == "LSO020"]
    assert (note.message, note.help) == (
        "opt.apply_gradients gets gradients of the unscaled loss `loss` (line 6), kept as written",
        "nothing to do: compat_lso's class applies the gradients as given, as Keras 2's",
    )


@pytest.mark.parametrize("before", [p.values[0] for p in REWRITES + REPORTS])
def test_keras2_has_nothing_to_do(before):
    assert not [f for f in assert_unchanged(before, "keras2") if f.code == "LSO020"]


@pytest.mark.parametrize("before", NOOPS)
@pytest.mark.parametrize("target", ["keras3", "shim"])
def test_noop(before, target):
    _, findings = rewrite(before, target)
    assert not [f for f in findings if f.code in ("LSO020", "LSO021")]


@pytest.mark.parametrize("target", ["keras3", "shim"])
def test_a_suppression_on_another_line_leaves_the_finding(target):
    before = (
        HEAD.replace("SGD())\n", "SGD())  # compat-lso: ignore[LSO015]\n")
        + _TAPE
        + f"grads = tape.gradient(loss, {V})\nopt.apply_gradients(zip(grads, {V}))\n"
    )
    findings = [
        f for f in rewrite(before, target)[1] if f.code == "LSO020" and "it now is" not in f.message
    ]
    assert [f.line for f in findings] == [_apply_line(before)]
