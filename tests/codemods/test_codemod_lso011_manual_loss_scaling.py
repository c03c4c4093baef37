"""LSO011: get_scaled_loss / get_unscaled_gradients -> scale_loss with still-scaled gradients.

The shapes are those real TF 2.4-2.15 projects wrote: a custom loop in a tf.function, a
Model.train_step on self.optimizer, guarded by `if fp16:`, a dict of scaled losses, two optimizers
(GAN, SAC), and those with something between unscaling and applying (clipping, Horovod all-reduce,
gradient accumulation, the gradients returned), which must be reported.
"""

import pytest

from codemods import table
from codemods.apply.engine import migrate
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes

TF = "import tensorflow as tf\n"

LOOP = (
    TF + "@tf.function\n"
    "def train_step(x, y):\n"
    "    with tf.GradientTape() as tape:\n"
    "        loss = loss_fn(y, model(x))\n"
    "        scaled_loss = optimizer.{scale}(loss)\n"
    "    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)\n"
    "    gradients = {unscaled}\n"
    "    optimizer.apply_gradients(zip(gradients, model.trainable_variables))\n"
    "    return loss\n"
)


def loop(scale, unscaled):
    return LOOP.format(scale=scale, unscaled=unscaled)


OLD_LOOP = loop("get_scaled_loss", "optimizer.get_unscaled_gradients(scaled_gradients)")
NEW_LOOP = loop("scale_loss", "scaled_gradients")

GUARDED = (
    "class Model(tf.keras.Model):\n"
    "    def train_step(self, data):\n"
    "        x, y = data\n"
    "        with tf.GradientTape() as tape:\n"
    "            loss = self.compiled_loss(y, self(x, training=True))\n"
    "            if self.fp16:\n"
    "                loss = self.optimizer.{scale}(loss)\n"
    "        gradients = tape.gradient(loss, self.trainable_variables)\n"
    "        if self.fp16:\n"
    "            {unscale}\n"
    "        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))\n"
)

REWRITES = [
    pytest.param(OLD_LOOP, NEW_LOOP, id="custom-loop-in-tf-function"),
    pytest.param(
        GUARDED.format(
            scale="get_scaled_loss",
            unscale="gradients = self.optimizer.get_unscaled_gradients(gradients)",
        ),
        GUARDED.format(scale="scale_loss", unscale="pass"),
        id="train-step-guarded-by-if-fp16-unscaling-in-place-leaves-pass",
    ),
    pytest.param(
        "def step(opt, v):\n"
        "    with tape:\n"
        "        scaled = opt.get_scaled_loss(loss)\n"
        "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        "def step(opt, v):\n"
        "    with tape:\n"
        "        scaled = opt.scale_loss(loss)\n"
        "    grads = tape.gradient(scaled, v)\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        id="gradient-computed-inline",
    ),
    pytest.param(
        "def step(opt, v):\n"
        "    scaled = opt.get_scaled_loss(loss)\n"
        "    grads = tape.gradient(scaled, v)\n"
        "    opt.apply_gradients(zip(opt.get_unscaled_gradients(grads), v))\n",
        "def step(opt, v):\n"
        "    scaled = opt.scale_loss(loss)\n"
        "    grads = tape.gradient(scaled, v)\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        id="unscaled-inline-in-apply-gradients",
    ),
    pytest.param(
        "def step(opt, v):\n"
        "    scaled = opt.get_scaled_loss(loss)\n"
        "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    pairs = list(zip(grads, v))\n"
        "    opt.apply_gradients(grads_and_vars=pairs)\n",
        "def step(opt, v):\n"
        "    scaled = opt.scale_loss(loss)\n"
        "    grads = tape.gradient(scaled, v)\n"
        "    pairs = list(zip(grads, v))\n"
        "    opt.apply_gradients(grads_and_vars=pairs)\n",
        id="through-a-grads-and-vars-list",
    ),
    pytest.param(
        "def train_step(inputs, labels):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = loss_fn(labels, model(inputs))\n"
        "        if mixed_precision:\n"
        "            loss = {k: optimizer.get_scaled_loss(v) for k, v in loss.items()}\n"
        "    if mixed_precision:\n"
        "        scaled = tape.gradient(loss['loss'], model.trainable_variables)\n"
        "        grads = optimizer.get_unscaled_gradients(scaled)\n"
        "    else:\n"
        "        grads = tape.gradient(loss['loss'], model.trainable_variables)\n"
        "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n",
        "def train_step(inputs, labels):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = loss_fn(labels, model(inputs))\n"
        "        if mixed_precision:\n"
        "            loss = {k: optimizer.scale_loss(v) for k, v in loss.items()}\n"
        "    if mixed_precision:\n"
        "        scaled = tape.gradient(loss['loss'], model.trainable_variables)\n"
        "        grads = scaled\n"
        "    else:\n"
        "        grads = tape.gradient(loss['loss'], model.trainable_variables)\n"
        "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n",
        id="scaled-in-a-comprehension-unscaled-in-one-branch",
    ),
    pytest.param(
        "def update(self):\n"
        "    agent_loss = self.agent_optimizer.get_scaled_loss(agent_loss)\n"
        "    critic_loss = self.critic_optimizer.get_scaled_loss(critic_loss)\n"
        "    a = self.agent_optimizer.get_unscaled_gradients(tape1.gradient(agent_loss, va))\n"
        "    c = self.critic_optimizer.get_unscaled_gradients(tape2.gradient(critic_loss, vc))\n"
        "    self.agent_optimizer.apply_gradients(zip(a, va))\n"
        "    self.critic_optimizer.apply_gradients(zip(c, vc))\n"
        "    return agent_loss\n",
        "def update(self):\n"
        "    agent_loss = self.agent_optimizer.scale_loss(agent_loss)\n"
        "    critic_loss = self.critic_optimizer.scale_loss(critic_loss)\n"
        "    a = tape1.gradient(agent_loss, va)\n"
        "    c = tape2.gradient(critic_loss, vc)\n"
        "    self.agent_optimizer.apply_gradients(zip(a, va))\n"
        "    self.critic_optimizer.apply_gradients(zip(c, vc))\n"
        "    return agent_loss\n",
        id="two-optimizers-paired-by-receiver",
    ),
    pytest.param(
        "for x, y in data:\n"
        "    with tf.GradientTape() as tape:\n"
        "        scaled = opt.get_scaled_loss(loss_fn(y, model(x)))\n"
        "    grads = tape.gradient(scaled, model.trainable_variables)\n"
        "    grads = opt.get_unscaled_gradients(grads)\n"
        "    opt.apply_gradients(zip(grads, model.trainable_variables))\n",
        "for x, y in data:\n"
        "    with tf.GradientTape() as tape:\n"
        "        scaled = opt.scale_loss(loss_fn(y, model(x)))\n"
        "    grads = tape.gradient(scaled, model.trainable_variables)\n"
        "    opt.apply_gradients(zip(grads, model.trainable_variables))\n",
        id="module-level-loop",
    ),
]


@pytest.mark.parametrize(("before", "after"), REWRITES)
def test_keras3_rewrites_both_together(before, after):
    findings = assert_rewrites(before, after, "keras3")
    assert [f.code for f in findings] == ["LSO011"] * len(findings) and findings
    assert all(f.fixed for f in findings)
    # Every keras3 finding says what changes in behaviour, rewritten ones too (issue 10).
    assert all("--explain LSO022" in f.help for f in findings)


@pytest.mark.parametrize(("before", "after"), REWRITES)
@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_both(before, after, target):
    findings = assert_unchanged(before, target)
    if target == "keras2":  # a note only where a loss was never scaled (below)
        assert not findings
        assert table.RULES_BY_CODE["LSO011"].action[target] == "note"
    else:  # at most the shim's report about compile()'s wrapping (below)
        assert all(f.code == "LSO011" and "compile()" in f.message for f in findings)


# tf_keras keeps Keras 2's class on every TensorFlow (tensorflow/models' official trainers guard
# on it, issue 30): its get_scaled_loss / get_unscaled_gradients stay, as Keras 2 wrote them.
TF_KERAS_BUILT = (
    TF + "import tf_keras\n"
    "optimizer = tf_keras.mixed_precision.LossScaleOptimizer(tf_keras.optimizers.SGD(0.1))\n"
)
TF_KERAS_GUARDED = (
    TF + "import tf_keras\n"
    "def step(model, optimizer, x):\n"
    "    with tf.GradientTape() as tape:\n"
    "        loss = model(x)\n"
    "        if isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer):\n"
    "            loss = optimizer.get_scaled_loss(loss)\n"
    "    grads = tape.gradient(loss, model.trainable_variables)\n"
    "    if isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer):\n"
    "        grads = optimizer.get_unscaled_gradients(grads)\n"
    "    optimizer.apply_gradients(list(zip(grads, model.trainable_variables)))\n"
)


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(TF_KERAS_BUILT + OLD_LOOP.removeprefix(TF), id="built-on-tf_keras"),
        pytest.param(TF_KERAS_GUARDED, id="guarded-on-tf_keras"),
        pytest.param(
            TF_KERAS_GUARDED.replace(
                "import tf_keras\n",
                "import tf_keras\nfrom tf_keras.mixed_precision import LossScaleOptimizer as LSO\n",
            ).replace("tf_keras.mixed_precision.LossScaleOptimizer", "LSO"),
            id="guarded-on-tf_keras-s-class-imported-by-name",
        ),
    ],
)
@pytest.mark.parametrize("target", ["keras3", "shim", "keras2"])
def test_code_on_tf_keras_is_left_alone(before, target):
    # Before: keras3 wrote `scale_loss` (which tf_keras's class lacks) and dropped the unscaling
    # (which its apply_gradients does not do), with no finding.
    assert not assert_unchanged(before, target)


def test_the_same_code_on_tf_keras_is_rewritten():
    before = TF_KERAS_GUARDED.replace("tf_keras.mixed_precision", "tf.keras.mixed_precision")
    after = before.replace("get_scaled_loss", "scale_loss").replace(
        "    if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):\n"
        "        grads = optimizer.get_unscaled_gradients(grads)\n",
        "    if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):\n"
        "        pass\n",
    )
    assert_rewrites(before, after, "keras3")


@pytest.mark.parametrize(
    ("test", "suffix"),
    [
        # A check for Keras 2's class (issue 30): its branch runs on TF 2.4-2.15, the code's own
        # TensorFlow, so the finding must not send the user to delete or suppress it.
        ('hasattr(opt, "get_scaled_loss")', ""),
        ('getattr(opt, "loss_scale", None) is not None', ""),
        # A check for the experimental module (TF 2.1-2.8): a version gate, named by its branch.
        (
            'hasattr(tf.keras.mixed_precision, "experimental")',
            " (branch of `if hasattr(tf.keras.mixed...`, line 3)",
        ),
    ],
)
def test_a_check_for_keras2s_class_is_no_tf23_branch(test, suffix):
    source = (
        TF
        + "def scaled(opt, loss):\n"
        + f"    if {test}:\n"
        + ("        return opt.get_scaled_loss(loss)\n    return loss\n")
    )
    findings = assert_unchanged(source, "keras3")
    [finding] = [f for f in findings if f.code == "LSO011" and f.line == 4]
    assert finding.message == (
        "opt.get_scaled_loss() not rewritten: no opt.get_unscaled_gradients() in the same "
        "function" + suffix
    )
    # ... and a check for Keras 2's class, always False on Keras 3, is reported at its own line.
    guards = [f.line for f in findings if "always" in f.message and not f.fixed]
    assert guards == ([] if suffix else [3])


TRAIN_STEP = (
    "import tensorflow as tf\n"
    "class Model(tf.keras.Model):\n"
    "    def train_step(self, data):\n"
    "        with tf.GradientTape() as tape:\n"
    "            loss = self.compiled_loss(data[1], self(data[0]))\n"
    "            scaled = self.optimizer.get_scaled_loss(loss)\n"
    "        grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, self.variables))\n"
    "        self.optimizer.apply_gradients(zip(grads, self.variables))\n"
)


def test_shim_reports_the_methods_on_what_compile_may_have_wrapped():
    # Under mixed_float16, compile() wraps a plain optimizer; on Keras 3 that is Keras 3's own
    # class, without these methods, unless compat_lso.install() ran.
    findings = assert_unchanged(TRAIN_STEP, "shim")
    assert [(f.code, f.line) for f in findings] == [("LSO011", 6)]
    assert "self.optimizer.get_scaled_loss() kept" in findings[0].message
    assert "python -m compat_lso run" in findings[0].help


def test_shim_trusts_a_file_that_constructs_its_loss_scale_optimizer():
    constructed = TRAIN_STEP + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
    findings = migrate(constructed, "shim").findings
    assert [f.code for f in findings] == ["LSO015"]


def test_shim_leaves_a_plain_name_alone():
    # `opt` may be built anywhere, compat_lso's class included: no guess.
    assert not assert_unchanged(
        "def step(opt, loss):\n    return opt.get_scaled_loss(loss)\n", "shim"
    )


CLIP = "def step(opt, v):\n    scaled = opt.get_scaled_loss(loss)\n"

REPORTS = [
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    grads, _ = tf.clip_by_global_norm(grads, 1.0)\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        "read at line 4 (`grads, _ = tf.clip_by_globa...`)",
        id="clipping-in-between",
    ),
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    tf.print(tf.linalg.global_norm(grads))\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        "read at line 4",
        id="logging-in-between",
    ),
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    grads = [hvd.allreduce(g) for g in grads]\n"
        "    opt.apply_gradients(zip(grads, v), experimental_aggregate_gradients=False)\n",
        "read at line 4",
        id="horovod-all-reduce-in-between",
    ),
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    for i, g in enumerate(grads):\n"
        "        accumulated[i].assign_add(g)\n",
        "goes into `for i, g in enumerate(grads):`",
        id="gradient-accumulation",
    ),
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    opt.apply_gradients(zip(grads, v))\n"
        "    return grads\n",
        "read at line 5 (`return grads`)",
        id="read-after-apply-gradients",
    ),
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    return scaled, grads\n",
        "goes into `return scaled, grads`",
        id="gradients-returned-applied-elsewhere",
    ),
    pytest.param(
        "def compute(opt):\n    return opt.get_scaled_loss(loss)\n",
        "no opt.get_unscaled_gradients() in the same function",
        id="scaled-in-a-helper-function",
    ),
    pytest.param(
        "def apply(opt, grads, v):\n"
        "    opt.apply_gradients(zip(opt.get_unscaled_gradients(grads), v))\n",
        "not rewritten: no opt.get_scaled_loss() in the same function",
        id="unscaled-without-the-scaling-in-this-function",
    ),
    pytest.param(
        "def step(self):\n"
        "    optimizer = self.optimizer\n"
        "    scaled = self.optimizer.get_scaled_loss(loss)\n"
        "    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    optimizer.apply_gradients(zip(grads, v))\n",
        "in the same function",
        id="receivers-written-differently",
    ),
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    opt.inner_optimizer.apply_gradients(zip(grads, v))\n",
        "not to apply_gradients",
        id="applied-by-another-optimizer",
    ),
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    opt.apply_gradients(zip(grads, v), name='step')\n",
        "passes name, which Keras 3's does not take",
        id="apply-gradients-with-keras-2-arguments",
    ),
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    def log():\n"
        "        tf.print(grads)\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        "read at line 5 (`tf.print(grads)`)",
        id="read-by-a-closure",
    ),
    pytest.param(
        "for batch in data:\n"
        "    if grads is not None:\n"
        "        log(grads)\n"
        "    scaled = opt.get_scaled_loss(loss)\n"
        "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        "read at line 2",
        id="read-in-the-next-loop-iteration",
    ),
    pytest.param(
        CLIP + "    a = opt.get_unscaled_gradients(ga)\n"
        "    b = opt.get_unscaled_gradients(gb)\n"
        "    opt.apply_gradients(zip(a + b, v))\n",
        "more than once here (lines 3, 4)",
        id="unscaled-twice",
    ),
    pytest.param(
        CLIP + "    grads = opt.get_unscaled_gradients(g)  # compat-lso: ignore[LSO011]\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        "the call at line 3 is suppressed",
        id="suppressed-partner",
    ),
    pytest.param(
        "def step(opt, v):\n"
        "    global grads\n"
        "    scaled = opt.get_scaled_loss(loss)\n"
        "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, v))\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        "global or nonlocal",
        id="global-gradients",
    ),
]


@pytest.mark.parametrize(("before", "reason"), REPORTS)
def test_keras3_reports_every_call_of_the_pair(before, reason):
    findings = assert_unchanged(before, "keras3")
    calls = before.count("get_scaled_loss(") + before.count("get_unscaled_gradients(")
    suppressed = before.count("compat-lso: ignore")
    assert manual_codes(findings) == ["LSO011"] * (calls - suppressed)
    for finding in findings:
        assert reason in finding.message, finding.message
        if "does not take" in reason:  # drop it and run again (test_codemod_lso011_explicit_...)
            assert finding.help.startswith("drop name (line")
            continue
        assert finding.help == table.RULES_BY_CODE["LSO011"].instruction_on("keras3")


def test_fix_message_names_both_lines_and_apply_gradients():
    (finding,) = [f for f in assert_rewrites(OLD_LOOP, NEW_LOOP, "keras3") if not f.note]
    assert finding.line == 6
    assert finding.message == (
        "optimizer.get_scaled_loss() -> scale_loss(), get_unscaled_gradients() at line 8 dropped "
        "(apply_gradients at line 9 unscales)"
    )


def test_keras3_reports_minimize_on_a_tf24_loss_scale_optimizer():
    before = (
        TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        "opt.minimize(loss, var_list=v, tape=tape)\n"
    )
    findings = assert_unchanged(before, "keras3")
    (finding,) = [f for f in findings if not f.fixed]
    assert finding.code == "LSO011" and "opt.scale_loss(loss)" in finding.help
    assert finding.message == "opt.minimize() not rewritten: Keras 3 optimizers have no minimize"


# Found by the differential tests (docs/differential.md): Keras 3's class has no minimize either,
# whether the old optimizer came from the experimental class or from a factory or an attribute;
# TF 2.21 raised AttributeError at the minimize line, which had no finding.
MINIMIZE_FORMS = {
    "experimental": (
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        '    tf.keras.optimizers.SGD(), loss_scale="dynamic")\n'
    ),
    "factory": (
        "def build(inner):\n"
        "    return tf.keras.mixed_precision.LossScaleOptimizer(inner)\n"
        "opt = build(tf.keras.optimizers.SGD())\n"
    ),
    "attribute": (
        "class Trainer:\n"
        "    def __init__(self, inner):\n"
        "        self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(inner)\n"
        "opt = Trainer(tf.keras.optimizers.SGD()).optimizer\n"
    ),
}


@pytest.mark.parametrize("form", MINIMIZE_FORMS)
def test_keras3_reports_minimize_on_an_old_optimizer_handed_on(form):
    before = TF + MINIMIZE_FORMS[form] + "opt.minimize(loss, var_list=v)\n"
    findings = migrate(before, "keras3").findings
    line = before.count("\n")
    (finding,) = [f for f in findings if f.line == line]
    assert (finding.code, finding.fixed) == ("LSO011", False)
    assert finding.message == "opt.minimize() not rewritten: Keras 3 optimizers have no minimize"


def test_keras3_leaves_minimize_on_keras3_code():
    before = (
        TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), "
        'name="x")\nopt.minimize(loss, v)\n'
    )
    assert not [f for f in migrate(before, "keras3").findings if "minimize" in f.message]


@pytest.mark.parametrize(
    "before",
    [
        pytest.param("opt.minimize(loss, v)\n", id="untyped-receiver"),
        pytest.param(
            TF + "opt = tf.keras.optimizers.SGD()\nopt.minimize(loss, v)\n", id="not-a-loss-scaler"
        ),
    ],
)
def test_keras3_leaves_other_minimize_calls(before):
    assert not assert_unchanged(before, "keras3")


def test_keras3_notes_the_rule_where_the_file_builds_no_loss_scale_optimizer():
    # compile()'s optimizer (or a parameter): LSO022's note at a constructor has no line here,
    # and the rewritten train_step now runs on Keras 3's rule (skipped steps, the scale).
    findings = migrate(TRAIN_STEP, "keras3").findings
    (note,) = [f for f in findings if f.note]
    assert (note.code, note.line, note.fixed) == ("LSO011", 6, True)
    assert note.message == (
        "runs on Keras 3's LossScaleOptimizer, not built here: skipped steps and the scale follow "
        "its rule, not TF 2.15's (--explain LSO022)"
    )
    built = TRAIN_STEP + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
    assert [f.code for f in migrate(built, "keras3").findings if f.note] == ["LSO022"]


# doctr's pattern: gradients of a loss never scaled, divided by the scale all the same. The old
# code trains at gradients / 32768 on TF 2.15 too; every target says so, with both choices.
NEVER_SCALED = (
    TF + "def step(opt, x, v):\n"
    "    with tf.GradientTape() as tape:\n"
    "        loss = tf.reduce_sum(x * v)\n"
    "    grads = opt.get_unscaled_gradients(tape.gradient(loss, v))\n"
    "    opt.apply_gradients(zip(grads, v))\n"
)
NEVER_SCALED_FACT = (
    "opt.get_unscaled_gradients() divides gradients of the never-scaled loss `loss` (line 5): "
    "training today runs at gradients / loss scale"
)


@pytest.mark.parametrize("target", ["keras2", "shim", "keras3"])
def test_a_loss_never_scaled_is_said_on_every_target_with_both_choices(target):
    findings = [f for f in assert_unchanged(NEVER_SCALED, target) if f.code == "LSO011"]
    assert [(f.line, f.message) for f in findings] == [(5, NEVER_SCALED_FACT)]
    (finding,) = findings
    assert finding.note is (target != "keras3")  # keras3: the call must change, by hand
    assert "your choice" in finding.help and "(numbers change)" in finding.help
    keeps = "drop the call" if target == "keras3" else "keep the call"
    assert f"{keeps} to keep today's numbers" in finding.help or (
        f"{keeps} for today's numbers" in finding.help
    )
    # --explain says the same: keeping Keras 2's numbers or fixing the bug is the user's choice.
    rule = table.RULES_BY_CODE["LSO011"]
    explained = rule.note + rule.details
    assert "trains at gradients / loss scale" in explained and "the user's choice" in explained


def test_a_loss_scaled_in_the_same_function_is_not_said_never_scaled():
    for target in ("keras2", "shim"):
        assert not [f for f in migrate(OLD_LOOP, target).findings if "never-scaled" in f.message]
