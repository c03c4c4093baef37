"""LSO017: loss_scale / dynamic_counter / dynamic reads, which Keras 3's class lacks."""

import pytest

from codemods import table
from codemods.apply.engine import migrate
from tests.codemods.codemod_cases import (
    assert_rewrites,
    assert_unchanged,
    manual_codes,
    rewrite,
)

TF = "import tensorflow as tf\n"
NEW = TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
BUILD = TF + "def build():\n    return net, tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
SCALE = "tf.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, tf.float32)"

KERAS3_REWRITES = [
    pytest.param(
        NEW + "tf.summary.scalar('loss_scale', opt.loss_scale, step=step)\n",
        NEW + f"tf.summary.scalar('loss_scale', {SCALE}, step=step)\n",
        id="loss-scale-a-tensor-read-at-that-time-built-or-not",
    ),
    pytest.param(
        NEW + "before = opt.loss_scale\n",
        NEW + f"before = {SCALE}\n",
        id="loss-scale-kept-as-a-snapshot-not-the-variable",
    ),
    pytest.param(
        NEW + "print(opt.dynamic_counter)\n",
        NEW + "print(opt.step_counter)\n",
        id="dynamic-counter-is-step-counter",
    ),
    pytest.param(
        NEW + "if opt.dynamic:\n    pass\n",
        NEW + "if True:\n    pass\n",
        id="dynamic-is-always-true",
    ),
    pytest.param(
        TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd, True, 2**10)\n"
        "print(opt.loss_scale)\n",
        TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd, initial_scale=2**10)\n"
        f"print({SCALE})\n",
        id="with-lso015-on-the-constructor",
    ),
    pytest.param(
        "import tensorflow as t\nfrom tensorflow.keras.mixed_precision import "
        "LossScaleOptimizer\nopt = LossScaleOptimizer(sgd)\nx = opt.loss_scale\n",
        "import tensorflow as t\nfrom tensorflow.keras.mixed_precision import "
        "LossScaleOptimizer\nopt = LossScaleOptimizer(sgd)\nx = "
        "t.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, t.float32)\n",
        id="the-users-tensorflow-alias",
    ),
    pytest.param(
        TF + "def log(optimizer):\n    return optimizer.dynamic_counter\n",
        TF + "def log(optimizer):\n    return optimizer.step_counter\n",
        id="dynamic-counter-on-any-receiver-the-name-is-unique",
    ),
    # Handed on (issue 32): the receiver's name says nothing; the flow finds the constructor.
    pytest.param(
        BUILD + "net, wrapped = build()\nprint(wrapped.loss_scale)\n",
        BUILD + "net, wrapped = build()\n" + f"print({SCALE.replace('opt', 'wrapped')})\n",
        id="through-a-function-returning-a-tuple",
    ),
    pytest.param(
        BUILD + "parts = build()\nprint(parts[1].dynamic_counter)\n",
        BUILD + "parts = build()\nprint(parts[1].step_counter)\n",
        id="through-a-returned-tuple-indexed",
    ),
    pytest.param(
        TF + "state = {'net': net, 'scaler': tf.keras.mixed_precision.LossScaleOptimizer(sgd)}\n"
        "if state['scaler'].dynamic:\n    pass\n",
        TF + "state = {'net': net, 'scaler': tf.keras.mixed_precision.LossScaleOptimizer(sgd)}\n"
        "if True:\n    pass\n",
        id="through-a-dict-literal",
    ),
    pytest.param(
        TF + "scalers = []\nscalers.append(tf.keras.mixed_precision.LossScaleOptimizer(sgd))\n"
        "for s in scalers:\n    print(s.dynamic_counter)\n",
        TF + "scalers = []\nscalers.append(tf.keras.mixed_precision.LossScaleOptimizer(sgd))\n"
        "for s in scalers:\n    print(s.step_counter)\n",
        id="through-a-list-appended-to-and-a-loop",
    ),
    pytest.param(
        TF + "class Trainer:\n    def __init__(self):\n"
        "        self.scaler = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
        "trainer = Trainer()\nprint(trainer.scaler.loss_scale)\n",
        TF + "class Trainer:\n    def __init__(self):\n"
        "        self.scaler = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
        "trainer = Trainer()\n"
        f"print({SCALE.replace('opt', 'trainer.scaler')})\n",
        id="through-an-attribute-stored-in-a-method",
    ),
    pytest.param(
        TF + "def log(scaler):\n    return scaler.loss_scale\n"
        "log(tf.keras.mixed_precision.LossScaleOptimizer(sgd))\n",
        TF + "def log(scaler):\n    return "
        f"{SCALE.replace('opt', 'scaler')}\n"
        "log(tf.keras.mixed_precision.LossScaleOptimizer(sgd))\n",
        id="through-a-parameter-every-call-here-gives-it",
    ),
]


# A feature test of the member follows the rewrite under it (rules/_member_guards.py): Keras 3's
# class lacks dynamic_counter, so the guard would always be False and the counter never logged.
# (step_counter appears only at build(): no member to test instead, the class the file names.)
LSO = "tf.keras.mixed_precision.LossScaleOptimizer"
GUARD_REWRITES = [
    pytest.param(
        NEW + "if hasattr(opt, 'dynamic_counter') and step % 100 == 0:\n"
        "    print(opt.dynamic_counter)\n",
        NEW + f"if isinstance(opt, {LSO}) and step % 100 == 0:\n    print(opt.step_counter)\n",
        id="a-guard-on-the-counter-becomes-the-class-the-file-names",
    ),
    pytest.param(
        NEW + "if hasattr(opt, 'loss_scale'):\n    before = opt.loss_scale\n",
        NEW + f"if isinstance(opt, {LSO}):\n    before = {SCALE}\n",
        id="a-guard-on-the-scale",
    ),
]


@pytest.mark.parametrize(("before", "after"), GUARD_REWRITES)
def test_keras3_guard_follows_the_rewrite(before, after):
    findings = assert_rewrites(before, after, "keras3")
    guard = [f for f in findings if f.code == "LSO017" and "hasattr" in f.message]
    assert len(guard) == 1 and guard[0].fixed and "isinstance(opt," in guard[0].message
    assert not manual_codes(findings)


@pytest.mark.parametrize(("before", "after"), GUARD_REWRITES)
@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_the_guard(before, after, target):
    """Keras 2 has the members, and so has the shim's class (its constructor is LSO015's)."""
    text, findings = rewrite(before, target)
    assert text.splitlines()[2:] == before.splitlines()[2:]
    assert not [f for f in findings if f.code == "LSO017"]


@pytest.mark.parametrize(("before", "after"), KERAS3_REWRITES)
def test_keras3_rewrites(before, after):
    findings = assert_rewrites(before, after, "keras3")
    assert "LSO017" in {f.code for f in findings if f.fixed}
    assert all("--explain LSO022" in f.help for f in findings if f.code == "LSO017")


def test_keras3_rewrites_a_read_on_the_experimental_class_returned_by_a_function():
    # LSO001 turns the constructor into the new class in the same run; the read follows it.
    before = (
        TF + "def build():\n    return 1, tf.keras.mixed_precision.experimental."
        "LossScaleOptimizer(sgd, 'dynamic')\nnet, wrapped = build()\nprint(wrapped.loss_scale)\n"
    )
    after = (
        TF + "def build():\n    return 1, tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
        f"net, wrapped = build()\nprint({SCALE.replace('opt', 'wrapped')})\n"
    )
    assert "LSO017" in {f.code for f in assert_rewrites(before, after, "keras3") if f.fixed}


def test_keras3_notes_the_rule_on_a_counter_of_an_optimizer_built_elsewhere():
    # compile()'s wrapper or a parameter: no LSO022 note at a constructor says that the counter
    # now follows Keras 3's rule, so the rewrite says it at its line.
    before = TF + "def log(optimizer):\n    return optimizer.dynamic_counter\n"
    notes = [(f.code, f.line, f.message) for f in migrate(before, "keras3").findings if f.note]
    assert notes == [("LSO017", 3, table.KERAS3_RULE_HERE)]
    built = NEW + "print(opt.dynamic_counter)\n"
    assert [f.code for f in migrate(built, "keras3").findings if f.note] == ["LSO022"]


def test_keras3_rewrites_the_scale_of_the_optimizer_the_module_scales_losses_with():
    # NVIDIA BERT's model_training_utils.py: `optimizer = model.optimizer`, scaled in a closure by
    # get_scaled_loss (only a loss scale optimizer has it; LSO011 rewrites it), its scale logged.
    before = (
        TF + "def train(model):\n    optimizer = model.optimizer\n    def step(loss):\n"
        "        return optimizer.get_scaled_loss(loss)\n    print(optimizer.loss_scale)\n"
    )
    result = migrate(before, "keras3")
    assert f"print({SCALE.replace('opt', 'optimizer')})" in result.text
    state = [f for f in result.findings if f.code == "LSO017"]
    assert [(f.fixed, f.note, f.line) for f in state] == [(True, False, 6), (True, True, 6)]
    assert state[1].message == table.KERAS3_RULE_HERE


def test_keras3_reads_every_member_of_a_receiver_it_treats_as_a_loss_scale_optimizer():
    # Issue 39: a receiver is a loss scale optimizer for every member or for none. Scaled with
    # get_scaled_loss (LSO011) or compile()'s wrapper under mixed_float16 (LSO019 renames its
    # `lr`): its `loss_scale` was rewritten but `dynamic` reported "if this is" one.
    scaled = (
        TF + "def train(model):\n    optimizer = model.optimizer\n    def step(loss):\n"
        "        return optimizer.get_scaled_loss(loss)\n    print(optimizer.dynamic)\n"
    )
    compiled = (
        TF + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
        "model.compile(optimizer='sgd', loss='mse')\n"
        "print(model.optimizer.lr, model.optimizer.loss_scale, model.optimizer.dynamic)\n"
    )
    for before, receiver in ((scaled, "optimizer"), (compiled, "model.optimizer")):
        result = migrate(before, "keras3")
        assert "LSO017" not in manual_codes(result.findings)
        dynamic = f"isinstance({receiver}, tf.keras.mixed_precision.LossScaleOptimizer)"
        assert dynamic in result.text and f"{receiver}.dynamic)" not in result.text
    assert f"{SCALE.replace('opt', 'model.optimizer')}" in migrate(compiled, "keras3").text


def test_keras3_still_reports_a_scale_read_through_another_binding():
    # The same name in another function is another object: no evidence there.
    before = (
        TF + "def a(optimizer):\n    return optimizer.get_scaled_loss(1.0)\n"
        "def b(optimizer):\n    return optimizer.loss_scale\n"
    )
    state = [f for f in migrate(before, "keras3").findings if f.code == "LSO017"]
    assert manual_codes(state) == ["LSO017"]
    assert "(if this is a LossScaleOptimizer)" in state[0].message


@pytest.mark.parametrize(("before", "after"), KERAS3_REWRITES)
def test_keras2_leaves_them(before, after):
    assert not assert_unchanged(before, "keras2")


KERAS3_REPORTS = [
    pytest.param(
        "class Log(tf.keras.callbacks.Callback):\n"
        "    def on_epoch_end(self, epoch, logs=None):\n"
        "        logs['loss_scale'] = self.model.optimizer.loss_scale\n",
        "self.model.optimizer.loss_scale (if this is a LossScaleOptimizer)",
        id="loss-scale-on-an-untyped-optimizer",
    ),
    pytest.param(
        "def f(opt):\n    return float(opt.loss_scale)\n",
        "opt.loss_scale",
        id="loss-scale-on-a-parameter-named-opt",
    ),
    pytest.param(
        "optimizer = model.optimizer\nreport(dynamic=optimizer.dynamic)\n",
        "optimizer.dynamic (if this is a LossScaleOptimizer)",
        # tests/old_code/scripts/tf24/fit_auto.py: Keras 3's class has no `dynamic` (was silent).
        id="dynamic-on-something-named-like-an-optimizer",
    ),
    pytest.param(
        TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd, dynamic=False, "
        "initial_scale=8)\nprint(opt.loss_scale)\n",
        "fixed scale",
        id="fixed-scale-has-no-keras-3-class",
    ),
    pytest.param(
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer\n"
        "opt = LossScaleOptimizer(sgd)\nx = opt.loss_scale\n",
        "no `import tensorflow`",
        id="loss-scale-without-a-tensorflow-import-to-write-it-with",
    ),
    pytest.param(
        NEW + "from trainer import build\nnet, wrapped = build()\nprint(wrapped.loss_scale)\n",
        "wrapped.loss_scale (if this is a LossScaleOptimizer)",
        id="untyped-a-function-of-another-module-in-a-module-that-makes-one",
    ),
    pytest.param(
        NEW + "def log(state):\n    return state.loss_scale\n",
        "state.loss_scale (if this is a LossScaleOptimizer)",
        id="untyped-a-parameter-no-call-here-gives-in-a-module-that-makes-one",
    ),
    pytest.param(
        BUILD + "def scaler():\n    return build()[1]\nprint(scaler().loss_scale)\n",
        "scaler().loss_scale: its receiver is computed",
        id="typed-but-computed-a-rewrite-would-call-it-three-times",
    ),
]


GUARD_REPORTS = [
    pytest.param(
        NEW + "scale = getattr(opt, 'loss_scale', None)\n",
        "getattr(opt, 'loss_scale', None) is always None on Keras 3",
        id="getattr-of-the-scale-on-the-optimizer-made-here",
    ),
    pytest.param(
        TF + "def log(opt, step):\n    if hasattr(opt, 'dynamic_counter') and step % 100 == 0:\n"
        "        print(opt.dynamic_counter)\n",
        "hasattr(opt, 'dynamic_counter') is always False on Keras 3",
        id="a-counter-guard-where-the-file-names-no-class",
    ),
]


@pytest.mark.parametrize(("before", "fact"), GUARD_REPORTS)
def test_keras3_reports_a_guard_it_cannot_follow(before, fact):
    _, findings = rewrite(before, "keras3")
    said = [f for f in findings if not f.fixed and f.code == "LSO017"]
    assert [f.message for f in said] == [f"{fact} (its class has no {fact.split(chr(39))[1]})"]
    assert said[0].line == 1 + before[: before.index(fact[:7])].count("\n")
    assert "isinstance(opt, keras.optimizers.LossScaleOptimizer)" in said[0].help


@pytest.mark.parametrize(("before", "reason"), KERAS3_REPORTS)
def test_keras3_reports(before, reason):
    findings = [f for f in assert_unchanged(before, "keras3") if f.code == "LSO017"]
    assert manual_codes(findings) == ["LSO017"]
    assert reason in findings[0].message
    assert findings[0].help == table.RULES_BY_CODE["LSO017"].instruction_on("keras3")


def test_keras3_reports_the_scale_read_on_what_the_graph_rewrite_returned():
    # aws-samples/deep-learning-models' ALBERT pretraining (issue 30): TF 2.4-2.8's function
    # returned a loss scale optimizer for a Keras one; its read was silent. The call is now
    # written as TF 2.4-2.8's choice by kind at run time (LSO008); the read is still reported.
    text, findings = rewrite(
        TF + "from trainer import get_adamw_optimizer\n"
        "optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(\n"
        "    get_adamw_optimizer(), loss_scale='dynamic')\n"
        "for batch in data:\n    loss_scale = optimizer.loss_scale\n",
        "keras3",
    )
    said = [(f.code, f.fixed, f.message) for f in findings if f.code in ("LSO008", "LSO017")]
    assert [(code, fixed) for code, fixed, _ in said] == [("LSO008", True), ("LSO017", False)]
    assert said[1][2] == "optimizer.loss_scale (if this is a LossScaleOptimizer)"
    assert "    loss_scale = optimizer.loss_scale\n" in text


NOOPS = [
    pytest.param(
        "import compat_lso\nopt = compat_lso.LossScaleOptimizer(sgd)\nprint(opt.loss_scale)\n",
        id="the-shims-class-has-them",
    ),
    pytest.param("layer = make()\nprint(layer.dynamic)\n", id="dynamic-on-anything-else"),
    pytest.param("config.loss_scale = 4\nprint(config.loss_scale)\n", id="a-config-attribute"),
    pytest.param(NEW + "print(opt.loss_scale)  # compat-lso: ignore[LSO017]\n", id="suppressed"),
    # In a module that makes one, what is typed as something else is left.
    pytest.param(
        NEW + "from absl import flags\nFLAGS = flags.FLAGS\nprint(FLAGS.loss_scale)\n",
        id="absl-flags",
    ),
    pytest.param(
        NEW + "import argparse\nparser = argparse.ArgumentParser()\nargs = parser.parse_args()\n"
        "print(args.loss_scale)\n",
        id="argparse-arguments",
    ),
    pytest.param(
        TF
        + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd, initial_scale=cfg.loss_scale)\n",
        id="an-argument-of-the-constructor-itself",
    ),
    pytest.param(
        NEW + "class Config:\n    def scale(self):\n        return self.loss_scale\n",
        id="an-attribute-of-the-modules-own-class",
    ),
    pytest.param(NEW + "def f(layer):\n    return layer.dynamic\n", id="dynamic-untyped"),
    pytest.param(
        TF + "import tf_keras\n"
        "opt = tf_keras.mixed_precision.LossScaleOptimizer(tf_keras.optimizers.SGD())\n"
        "print(opt.loss_scale, opt.dynamic_counter, opt.dynamic)\n",
        # tf_keras keeps Keras 2's class (issue 30): was "not static" on keras3, and the sweep's.
        id="tf_keras-keeps-them",
    ),
    pytest.param(
        TF + "opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(\n"
        "    tf.compat.v1.train.AdamOptimizer(), loss_scale=cfg.loss_scale)\n",
        id="an-argument-of-the-graph-rewrite",
    ),
]


@pytest.mark.parametrize("before", NOOPS)
@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_noop(before, target):
    findings = assert_unchanged(before, target)
    assert "LSO017" not in {f.code for f in findings}


def test_a_call_is_lso010s():
    assert manual_codes(assert_unchanged(NEW + "opt.loss_scale()\n", "keras3")) == ["LSO010"]


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_the_reads(target):
    findings = assert_unchanged(
        "def f(optimizer):\n    return optimizer.loss_scale, optimizer.dynamic_counter\n", target
    )
    assert not findings
    assert table.RULES_BY_CODE["LSO017"].action[target] == "none"


# issue 38: an optimizer rebuilt from a loss scale optimizer's config (resuming from a stored
# config) is that optimizer again: its reads are rewritten as the original's. After --target
# keras3, `opt2.loss_scale` raised AttributeError with no finding at its line.
REBUILT = [
    pytest.param(
        "opt2 = tf.keras.optimizers.deserialize(tf.keras.optimizers.serialize(opt))\n",
        id="deserialize-of-serialize",
    ),
    pytest.param(
        "config = tf.keras.optimizers.serialize(opt)\n"
        "opt2 = tf.keras.optimizers.deserialize(config)\n",
        id="deserialize-of-a-stored-config",
    ),
    pytest.param("opt2 = tf.keras.optimizers.get(opt)\n", id="get-returns-it"),
    pytest.param(
        "opt2 = tf.keras.optimizers.get(config=opt.get_config())\n", id="get-of-its-config"
    ),
    pytest.param(
        "opt2 = tf.keras.mixed_precision.LossScaleOptimizer.from_config(opt.get_config())\n",
        id="from-config-of-the-class",
    ),
    pytest.param("opt2 = type(opt).from_config(opt.get_config())\n", id="type-from-config"),
    pytest.param("opt2 = opt.__class__.from_config(cfg)\n", id="class-from-config"),
]


@pytest.mark.parametrize("rebuild", REBUILT)
def test_keras3_follows_an_optimizer_rebuilt_from_its_config(rebuild):
    text, findings = rewrite(NEW + rebuild + "print(opt2.loss_scale)\n", "keras3")
    assert text.endswith(f"print({SCALE.replace('opt', 'opt2')})\n")
    state = [(f.code, f.fixed, f.line) for f in findings if f.code == "LSO017"]
    assert state == [("LSO017", True, text.count("\n"))]


def test_keras3_follows_the_experimental_class_through_deserialize():
    before = (
        TF + "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, 'dynamic')\n"
        "opt2 = tf.keras.optimizers.deserialize(tf.keras.optimizers.serialize(opt))\n"
        "print(opt2.loss_scale)\n"
    )
    text, _ = rewrite(before, "keras3")
    assert text.endswith(f"print({SCALE.replace('opt', 'opt2')})\n")


def test_keras3_reports_the_class_built_from_a_config_it_cannot_read():
    # The class's own from_config makes one, whatever the config: a fixed or dynamic one.
    before = (
        TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer.from_config(load('opt.json'))\n"
        "print(opt.loss_scale)\n"
    )
    findings = [f for f in assert_unchanged(before, "keras3") if f.code == "LSO017"]
    assert [(f.fixed, f.line, f.message) for f in findings] == [
        (
            False,
            3,
            "opt.loss_scale: the optimizer at line 2 is built from a config the codemod "
            "cannot read",
        )
    ]


def test_keras3_reports_what_a_stored_config_may_name_in_a_module_that_makes_one():
    # `get(flags.optimizer)` may name any optimizer, a loss scale optimizer too.
    findings = assert_unchanged(
        NEW + "opt2 = tf.keras.optimizers.get(flags.optimizer)\nprint(opt2.loss_scale)\n",
        "keras3",
    )
    said = [f.message for f in findings if f.code == "LSO017"]
    assert said == ["opt2.loss_scale (if this is a LossScaleOptimizer)"]
    # A name Keras knows is a plain optimizer: nothing there.
    plain = NEW + "opt2 = tf.keras.optimizers.get('adam')\nprint(opt2.loss_scale)\n"
    assert [f for f in assert_unchanged(plain, "keras3") if f.code == "LSO017"] == []


def test_keras3_follows_a_parameter_passed_on_from_a_lambda_default():
    # The parameter's caller is a lambda whose default holds the value: the lambda's body is an
    # expression, not a statement list (this was an internal error).
    source = TF + (
        "def pick(params):\n"
        "    return params['optimizer']\n"
        "def build(settings):\n"
        "    later = lambda p=settings: pick(p)\n"
        "    opt = pick(settings)\n"
        "    return opt.loss_scale\n"
    )
    text, findings = rewrite(source, "keras3")
    assert text == source
    assert manual_codes(findings) == ["LSO017"]
