"""LSO019: Keras 2's optimizer forms on a loss scale optimizer, which Keras 3 lacks.

The receivers follow real trainers (tests/codemods/forms/ reproduces several): Horovod's
broadcast after the first step (NVIDIA DeepLearningExamples' BERT `optimizer = model.optimizer`,
ELECTRA's `opt` parameter that get_scaled_loss is called on, OpenNMT's `self._optimizer =
optimizer`), the BERT trainer's `optimizer._optimizer._decayed_lr('float32')`, Horovod's elastic
example's `model.optimizer.lr`.
"""

import pytest

from codemods import table
from codemods.io.prefilter import may_contain_targets
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

TF = "import tensorflow as tf\n"
LSO = TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
MIXED = TF + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
# Mixed precision by a layer's policy, no global policy set here (compile() may run elsewhere,
# under one set elsewhere): the shim target cannot know, and reports.
LAYER_POLICY = TF + "layer = tf.keras.layers.Dense(4, dtype='mixed_float16')\n"

KERAS3_REWRITES = [
    pytest.param(
        LSO + "hvd.broadcast_variables(opt.variables(), root_rank=0)\n",
        LSO + "hvd.broadcast_variables(opt.variables, root_rank=0)\n",
        id="variables-called-on-an-optimizer-constructed-in-the-file",
    ),
    pytest.param(
        MIXED + "hvd.broadcast_variables(model.optimizer.variables(), 0)\n",
        MIXED + "hvd.broadcast_variables(model.optimizer.variables, 0)\n",
        id="model-optimizer-in-a-mixed-precision-file-is-compiles-wrapper",
    ),
    pytest.param(
        MIXED + "optimizer = model.optimizer\nhvd.broadcast_variables(optimizer.variables(), 0)\n",
        MIXED + "optimizer = model.optimizer\nhvd.broadcast_variables(optimizer.variables, 0)\n",
        id="a-name-bound-to-model-optimizer",
    ),
    pytest.param(
        TF + "class Trainer:\n"
        "    def __init__(self, optimizer):\n"
        "        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)\n"
        "        self._optimizer = optimizer\n"
        "    def broadcast(self):\n"
        "        hvd.broadcast_variables(self._optimizer.variables(), root_rank=0)\n",
        TF + "class Trainer:\n"
        "    def __init__(self, optimizer):\n"
        "        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)\n"
        "        self._optimizer = optimizer\n"
        "    def broadcast(self):\n"
        "        hvd.broadcast_variables(self._optimizer.variables, root_rank=0)\n",
        id="an-attribute-assigned-a-loss-scale-optimizer",
    ),
    pytest.param(
        LSO + "print(float(opt.lr))\n",
        LSO + "print(float(opt.learning_rate))\n",
        id="lr-read-is-learning-rate",
    ),
    pytest.param(
        MIXED + "tf.keras.backend.set_value(self.model.optimizer.lr, 0.1)\n",
        MIXED + "self.model.optimizer.learning_rate.assign(0.1)\n",
        id="lr-in-a-callback-on-compiles-wrapper",
    ),
    pytest.param(
        LSO + "from tensorflow.keras import backend as K\nK.set_value(opt.lr, 2**-4 * n)\n",
        LSO + "from tensorflow.keras import backend as K\nopt.learning_rate.assign(2**-4 * n)\n",
        id="set-value-on-lr-through-k-is-assign",
    ),
    pytest.param(
        LSO + "opt.lr = 0.5\n",
        LSO + "opt.learning_rate = 0.5\n",
        id="lr-assigned-is-learning-rate-assigned",
    ),
    pytest.param(
        LSO + "inner = opt._optimizer\n",
        LSO + "inner = opt.inner_optimizer\n",
        id="private-optimizer-is-inner-optimizer",
    ),
]


@pytest.mark.parametrize(("before", "after"), KERAS3_REWRITES)
def test_keras3_rewrites(before, after):
    findings = assert_rewrites(before, after, "keras3")
    assert [f.code for f in findings if f.fixed and f.code == "LSO019"] == ["LSO019"]
    assert not manual_codes(findings)


@pytest.mark.parametrize(("before", "after"), KERAS3_REWRITES)
def test_keras2_keeps_the_forms(before, after):
    assert "LSO019" not in {f.code for f in assert_unchanged(before, "keras2")}


COMPILED = {
    "model-optimizer-in-a-mixed-precision-file-is-compiles-wrapper",
    "a-name-bound-to-model-optimizer",
    "lr-in-a-callback-on-compiles-wrapper",
}


@pytest.mark.parametrize(("before", "after"), KERAS3_REWRITES)
def test_shim_keeps_the_forms(before, after, request):
    # compat_lso's class keeps them on Keras 3. compile()'s wrapper in a file that makes no loss
    # scale optimizer is Keras 3's own class unless compat_lso.install() ran: where the file sets
    # the mixed_float16 policy, the shim target adds that call (LSO023), and nothing is reported.
    text, findings = rewrite(before, "shim")
    assert manual_codes([f for f in findings if f.code == "LSO019"]) == []
    compiled = request.node.callspec.id in COMPILED
    assert ("compat_lso.install()" in text) == compiled
    assert (".variables()" in text) == (".variables()" in before)


def test_shim_reports_the_forms_on_compiles_wrapper_where_no_policy_is_set_here():
    # No policy in the file: compile() may run under one set elsewhere; install() is not added.
    before = LAYER_POLICY + "hvd.broadcast_variables(model.optimizer.variables(), 0)\n"
    text, findings = rewrite(before, "shim")
    assert manual_codes([f for f in findings if f.code == "LSO019"]) == ["LSO019"]
    assert "compat_lso run" in next(f for f in findings if f.code == "LSO019").help
    assert "install()" not in text


def test_shim_keeps_compiles_wrapper_where_the_file_makes_one():
    before = (
        LSO
        + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
        + ("hvd.broadcast_variables(model.optimizer.variables(), 0)\n")
    )
    assert "LSO019" not in {f.code for f in rewrite(before, "shim")[1]}


def test_the_receiver_of_get_scaled_loss_is_a_loss_scale_optimizer():
    # ELECTRA's run_tf_squad.py: `opt` is a parameter; the function scales the loss with it.
    before = (
        TF + "def train_step(opt, model, x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss_value = opt.get_scaled_loss(model(x))\n"
        "    gradients = tape.gradient(loss_value, model.trainable_variables)\n"
        "    gradients = opt.get_unscaled_gradients(gradients)\n"
        "    (gradients, _) = tf.clip_by_global_norm(gradients, clip_norm=1.0)\n"
        "    opt.apply_gradients(zip(gradients, model.trainable_variables))\n"
        "    hvd.broadcast_variables(opt.variables(), root_rank=0)\n"
    )
    text, findings = rewrite(before, "keras3")
    assert "hvd.broadcast_variables(opt.variables, root_rank=0)" in text
    assert "LSO019" in {f.code for f in findings if f.fixed}


SET_VALUE_ON_LEARNING_RATE = LSO + "tf.keras.backend.set_value(opt.learning_rate, 0.1)\n"


def test_set_value_on_learning_rate_is_assign_on_keras3():
    # Keras 3's legacy set_value does np.asarray(value, dtype=x.dtype.name): a Keras 3 variable's
    # dtype is a str, so it raises; Keras 2's learning_rate was a tf.Variable.
    findings = assert_rewrites(
        SET_VALUE_ON_LEARNING_RATE, LSO + "opt.learning_rate.assign(0.1)\n", "keras3"
    )
    assert not manual_codes(findings)
    assert [f.message for f in findings if f.code == "LSO019"] == [
        "tf.keras.backend.set_value(opt.learning_rate, v) -> opt.learning_rate.assign(v)"
    ]


def test_set_value_on_learning_rate_is_reported_on_shim():
    # compat_lso's `lr` is the backing tf.Variable; its `learning_rate` is Keras 3's variable.
    findings = [f for f in rewrite(SET_VALUE_ON_LEARNING_RATE, "shim")[1] if f.code == "LSO019"]
    assert manual_codes(findings) == ["LSO019"]
    assert findings[0].line == SET_VALUE_ON_LEARNING_RATE.count("\n")
    assert (findings[0].message, findings[0].help) == (
        "tf.keras.backend.set_value(opt.learning_rate, v): Keras 3's legacy set_value fails on a "
        "Keras 3 variable",
        "write opt.learning_rate.assign(v)",
    )


@pytest.mark.parametrize(
    "before, message, help",
    [
        pytest.param(
            LSO + "hvd.broadcast_variables(opt.variables(), root_rank=0)\n",
            "opt.variables() -> opt.variables: a list, not a method, on Keras 3",
            "it also holds the loss scale's state; Keras 2's list is "
            "opt.inner_optimizer.variables, less its learning rate",
            id="variables-says-what-the-list-holds",
        ),
        pytest.param(
            LSO + "print(float(opt.lr))\n",
            "opt.lr -> opt.learning_rate, Keras 3's name for it",
            "",
            id="lr-says-it-is-the-same-object",
        ),
    ],
)
def test_a_rewrite_says_what_changed_and_why(before, message, help):
    findings = [f for f in rewrite(before, "keras3")[1] if f.code == "LSO019"]
    assert [(f.fixed, f.message, f.help) for f in findings] == [(True, message, help)]


REFUSED = [
    pytest.param(LSO + "w = opt.get_weights()\n", "opt.get_weights", id="get-weights"),
    pytest.param(LSO + "w = opt.weights\n", "opt.weights", id="weights"),
    pytest.param(LSO + "s = opt.get_slot(var, 'momentum')\n", "opt.get_slot", id="get-slot"),
    pytest.param(LSO + "names = opt.get_slot_names()\n", "opt.get_slot_names", id="slot-names"),
    pytest.param(
        LSO + "opt.set_weights(saved)\n", "opt.set_weights", id="set-weights-means-the-inner-state"
    ),
    pytest.param(
        LSO + "print(opt._decayed_lr)\n",
        "opt._decayed_lr",
        id="decayed-lr-not-called",  # called, it is rewritten (test_codemod_lso019_decayed_lr.py)
    ),
    pytest.param(
        LSO + "opt.iterations = tf.compat.v1.train.get_or_create_global_step()\n",
        "opt.iterations = ...",
        id="iterations-assigned",
    ),
]


# compat_lso's class has Keras 2's get_gradients (TF 2.4-2.10's meaning, in a tf.function:
# tests/shim/test_keras2_surface.py); Keras 3's own class has none.
GET_GRADIENTS = [
    pytest.param(
        LSO + "g = opt.get_gradients(loss, params)\n", "opt.get_gradients", id="get-gradients"
    ),
    pytest.param(
        "class Trainer:\n"
        "    def step(self, loss, params):\n"
        "        loss = self._optimizer.get_scaled_loss(loss)\n"
        "        return self._optimizer.get_gradients(loss, params)\n",
        "self._optimizer.get_gradients",
        id="get-gradients-on-self-optimizer-opennmt",
    ),
]


def _targets(cases, shim):
    return [
        pytest.param(*case.values, target, id=f"{case.id}-{target}")
        for case in cases
        for target in (["keras3", "shim"] if shim else ["keras3"])
    ]


@pytest.mark.parametrize(
    ("before", "written", "target"), _targets(REFUSED, True) + _targets(GET_GRADIENTS, False)
)
def test_forms_keras_3_lacks_are_reported(before, written, target):
    # shim too: compat_lso's class refuses them on Keras 3 (tests/shim/test_keras2_surface.py).
    findings = [f for f in rewrite(before, target)[1] if f.code == "LSO019"]
    assert manual_codes(findings) == ["LSO019"]
    assert findings[0].message.startswith(written)
    assert findings[0].line == before.count("\n")  # at the line, not elsewhere
    assert findings[0].help, "the fix, on its own line"


def test_the_help_says_why_keras_3s_list_is_not_keras_2s():
    # Natively (TF 2.15 legacy Adam under Keras 2's class vs TF 2.21): Keras 2's get_weights()
    # is [iterations, m..., v...]; Keras 3's inner variables are [iteration, learning_rate, then
    # each variable's momentum and velocity together]: the same list only by hand.
    for before in (LSO + "w = opt.get_weights()\n", LSO + "opt.set_weights(saved)\n"):
        [finding] = [f for f in rewrite(before, "keras3")[1] if f.code == "LSO019"]
        assert "Keras 3's order" in finding.help and "learning rate" in finding.help


@pytest.mark.parametrize(("before", "written"), GET_GRADIENTS)
def test_the_shim_keeps_get_gradients(before, written):
    text, findings = rewrite(before, "shim")
    assert "LSO019" not in {f.code for f in findings}
    assert f"{written}(loss, params)" in text


def test_get_gradients_on_the_inner_optimizer_is_reported_on_the_shim_target():
    # `opt._optimizer` is a Keras 3 optimizer there, which has no get_gradients.
    before = LSO + "g = opt._optimizer.get_gradients(loss, params)\n"
    findings = [f for f in rewrite(before, "shim")[1] if f.code == "LSO019"]
    assert manual_codes(findings) == ["LSO019"]
    assert findings[0].message.startswith("opt._optimizer.get_gradients")


def test_get_gradients_on_compiles_wrapper_says_to_install_on_the_shim_target():
    # A file that makes no loss scale optimizer and sets no policy (LSO023 would add
    # compat_lso.install()): compile() may make Keras 3's own, which lacks it.
    before = LAYER_POLICY + "g = model.optimizer.get_gradients(loss, params)\n"
    findings = [f for f in rewrite(before, "shim")[1] if f.code == "LSO019"]
    assert manual_codes(findings) == ["LSO019"]
    assert "kept, but compile() may make" in findings[0].message
    assert "compat_lso.install()" in findings[0].help


@pytest.mark.parametrize(("before", "written"), REFUSED + GET_GRADIENTS)
def test_keras2_has_them(before, written):
    assert "LSO019" not in {f.code for f in assert_unchanged(before, "keras2")}


NOOPS = [
    pytest.param(LSO + "n = len(opt.variables)\n", id="variables-uncalled-is-keras-3s-list"),
    pytest.param(LSO + "print(int(opt.iterations))\n", id="iterations-read"),
    pytest.param(
        LSO + "opt.variables(scope)\n", id="variables-with-an-argument-is-not-keras-2s-method"
    ),
    pytest.param(LSO + "opt.iterations.assign(0)\n", id="iterations-assigned-through-assign"),
    pytest.param(
        TF + "hvd.broadcast_variables(model.optimizer.variables(), 0)\n",
        id="model-optimizer-in-a-file-without-mixed-precision",
    ),
    pytest.param(
        LSO + "def f(scope):\n    return scope.variables(), scope.lr\n",
        id="another-object-with-the-same-names",
    ),
    pytest.param(
        LSO + "opt = make()\nopt.variables()\n", id="name-rebound-to-something-else-first"
    ),
    pytest.param(
        TF + "opt = make()\nopt.get_slot(v, 'm')\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
        id="wrapped-only-after-the-read",
    ),
    pytest.param(LSO + "w = opt.get_weights()  # compat-lso: ignore[LSO019]\n", id="suppressed"),
    pytest.param(
        LSO + "tf.keras.backend.set_value(layer.learning_rate, 0.1)\n",
        id="set-value-on-another-objects-learning-rate",
    ),
    pytest.param(
        LSO + "print(tf.keras.backend.get_value(opt.learning_rate))\n",
        id="get-value-on-learning-rate-works-on-keras-3",
    ),
]


@pytest.mark.parametrize("before", NOOPS)
@pytest.mark.parametrize("target", table.TARGETS)
def test_noop(before, target):
    # (shim: LSO015 moves the constructor, the rest of the text stays.)
    text, findings = rewrite(before, target)
    assert "LSO019" not in {f.code for f in findings}

    def rest(lines):
        return [
            line for line in lines.splitlines() if "import" not in line and "LossScale" not in line
        ]

    assert rest(text) == rest(before)


def test_the_catalogue_says_what_each_target_does():
    rule = table.RULES_BY_CODE["LSO019"]
    assert rule.action == {"keras2": "none", "keras3": "safe", "shim": "manual"}


@pytest.mark.parametrize("target", ["keras3", "shim"])
def test_the_prefilter_reads_a_mixed_precision_file_with_a_form(target):
    # No LossScaleOptimizer in the text: compile() adds it under mixed_float16.
    form = MIXED + "hvd.broadcast_variables(model.optimizer.variables(), 0)\n"
    assert may_contain_targets(form.encode(), target)
    # A policy setter alone lets a file in too: compile() under it wraps (LSO022, LSO023).
    assert may_contain_targets(MIXED.encode() + b"model.fit(x, y)\n", target)
    assert not may_contain_targets(TF.encode() + b"model.fit(x, y)  # mixed_float16\n", target)


# TF 2.4's state on compile()'s wrapper (tensorflow/docs' mixed_precision guide's callback,
# `self.model.optimizer.loss_scale`): on Keras 3 that wrapper is Keras 3's own class, which has
# none of them, unless compat_lso.install() runs.
STATE_READS = [
    pytest.param("s = float(self.model.optimizer.loss_scale)\n", id="loss-scale"),
    pytest.param("optimizer = model.optimizer\nprint(optimizer.dynamic)\n", id="dynamic"),
    pytest.param("n = int(model.optimizer.dynamic_counter)\n", id="dynamic-counter"),
]


@pytest.mark.parametrize("read", STATE_READS)
def test_shim_installs_for_state_read_on_compiles_wrapper_in_a_file_that_makes_none(read):
    # The policy is set here, compile() runs elsewhere: compat_lso.install() is added (LSO023),
    # after which compile()'s wrapper is compat_lso's class, which has them.
    before = MIXED + read
    text, findings = rewrite(before, "shim")
    assert manual_codes(findings) == []
    assert [f.code for f in findings if f.fixed] == ["LSO023"]
    assert text == "import compat_lso\n" + TF + "\ncompat_lso.install()\n" + before[len(TF) :]
    assert may_contain_targets(before.encode(), "shim")


@pytest.mark.parametrize("read", STATE_READS)
def test_shim_reports_state_read_on_compiles_wrapper_where_no_policy_is_set_here(read):
    before = LAYER_POLICY + read
    findings = [f for f in rewrite(before, "shim")[1] if f.code == "LSO019"]
    assert manual_codes(findings) == ["LSO019"]
    assert findings[0].line == before.count("\n")
    assert "Keras 3's LossScaleOptimizer, which lacks it" in findings[0].message
    assert "compat_lso.install()" in findings[0].help
    assert "compat_lso.LossScaleOptimizer(...)" in findings[0].help


@pytest.mark.parametrize("read", STATE_READS)
def test_shim_keeps_state_reads_where_the_file_makes_one(read):
    # `model.optimizer` is then the file's own, compat_lso's after --target shim.
    before = LSO + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n" + read
    assert "LSO019" not in {f.code for f in rewrite(before, "shim")[1]}


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_state_reads_elsewhere_are_not_lso019s(target):
    for before in (
        TF + "s = float(self.model.optimizer.loss_scale)\n",  # no mixed precision
        MIXED + "s = float(self.model.optimizer.loss_scale())\n",  # LSO010's
    ):
        assert "LSO019" not in {f.code for f in rewrite(before, target)[1]}


def test_keras3_rewrites_the_forms_of_a_receiver_lso017_reads_the_state_of():
    # Issue 39: one receiver, one answer. An optimizer made by a function of the module and kept
    # in an attribute: LSO017 followed it (codemods/meaning/instances.py) and rewrote its
    # `loss_scale`, while `lr` and `variables()` on it were left to fail on Keras 3 unreported.
    findings = assert_rewrites(
        TF + "def build(opt):\n    return tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
        "class T:\n    def __init__(self):\n        self.opt = build(tf.keras.optimizers.SGD())\n"
        "    def log(self):\n        print(self.opt.lr, self.opt.variables())\n",
        TF + "def build(opt):\n    return tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
        "class T:\n    def __init__(self):\n        self.opt = build(tf.keras.optimizers.SGD())\n"
        "    def log(self):\n        print(self.opt.learning_rate, self.opt.variables)\n",
        "keras3",
    )
    assert [f.code for f in findings if f.fixed and not f.note] == ["LSO019", "LSO019"]
