"""LSO023 (shim): compile()'s optimizer made compat_lso's where the file relies on TF 2.4's class.

The forms follow tests/old_code/scripts/patterns/: fit_policy_auto_wrap.py (a callback reading
`self.model.optimizer.loss_scale`), train_step_override_wrap_only.py (a train_step applying the
gradients of an unscaled loss through `self.optimizer`) and the train_step overrides that call
`self.optimizer.get_scaled_loss`, all compiled under the mixed_float16 global policy; and
fit_policy_schedule_adam.py, fit_policy_warmup_callback.py, train_on_batch_policy_decay.py, where
nothing reads TF 2.4's API but Keras 3's wrapper trains differently (skipped steps are not counted
in `iterations`, which schedules and Adam read). Where compile() cannot be proven to wrap, the shim
target adds `compat_lso.install()` after the imports, as `python -m compat_lso run` does.
"""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

TF = "import tensorflow as tf\n"
SHIM = "import compat_lso\n"
POLICY = "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
READ = "print(model.optimizer.loss_scale)\n"
SGD = "tf.keras.optimizers.SGD(0.1)"
WRAPPED_SGD = f"compat_lso.LossScaleOptimizer({SGD})"
CALLBACK = (
    "class Record(tf.keras.callbacks.Callback):\n"
    "    def on_train_batch_end(self, batch, logs=None):\n"
    "        print(float(self.model.optimizer.loss_scale))\n"
)
TRAIN_STEP = (
    "class Model(tf.keras.Model):\n"
    "    def train_step(self, data):\n"
    "        x, y = data\n"
    "        with tf.GradientTape() as tape:\n"
    "            loss = tf.reduce_mean(tf.square(self(x) - y))\n"
    "            scaled = self.optimizer.get_scaled_loss(loss)\n"
    "        grads = tape.gradient(scaled, self.trainable_variables)\n"
    "        grads = self.optimizer.get_unscaled_gradients(grads)\n"
    "        grads, _ = tf.clip_by_global_norm(grads, 1.0)\n"
    "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n"
    "        return {'loss': loss}\n"
)
WRAP_ONLY_STEP = (
    "class Model(tf.keras.Model):\n"
    "    def train_step(self, data):\n"
    "        x, y = data\n"
    "        with tf.GradientTape() as tape:\n"
    "            loss = tf.reduce_mean(tf.square(self(x) - y))\n"
    "        grads = tape.gradient(loss, self.trainable_variables)\n"
    "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n"
    "        return {'loss': loss}\n"
)


def _compiled(compile_line: str, before: str = TF + POLICY, after: str = READ) -> str:
    return before + "model = build()\n" + compile_line + after


REWRITES = [
    pytest.param(
        _compiled(f"model.compile(loss='mse', optimizer={SGD})\n"),
        SHIM + _compiled(f"model.compile(loss='mse', optimizer={WRAPPED_SGD})\n"),
        id="an-optimizer-class-called-by-keyword",
    ),
    pytest.param(
        _compiled("model.compile(optimizer='adam', loss='mse')\n"),
        SHIM
        + _compiled(
            "model.compile(optimizer=compat_lso.LossScaleOptimizer("
            "tf.keras.optimizers.get('adam')), loss='mse')\n"
        ),
        id="a-name-keras-knows-made-the-optimizer-compile-would-make",
    ),
    pytest.param(
        _compiled(f"opt = {SGD}\nmodel.compile(opt, 'mse')\n"),
        SHIM
        + _compiled(f"opt = {SGD}\nmodel.compile(compat_lso.LossScaleOptimizer(opt), 'mse')\n"),
        id="a-name-bound-to-an-optimizer-passed-positionally",
    ),
    pytest.param(
        _compiled("model.compile(loss='mse')\n"),
        SHIM
        + _compiled(
            "model.compile(loss='mse', optimizer=compat_lso.LossScaleOptimizer("
            "tf.keras.optimizers.get('rmsprop')))\n"
        ),
        id="no-optimizer-compiles-default-rmsprop",
    ),
    pytest.param(
        TF + CALLBACK + POLICY + f"model = build()\nmodel.compile(optimizer={SGD})\n",
        SHIM
        + TF
        + CALLBACK
        + POLICY
        + f"model = build()\nmodel.compile(optimizer={WRAPPED_SGD})\n",
        id="a-callback-reads-the-loss-scale",
    ),
    pytest.param(
        TF + TRAIN_STEP + POLICY + f"model = Model()\nmodel.compile(optimizer={SGD})\n",
        SHIM
        + TF
        + TRAIN_STEP
        + POLICY
        + f"model = Model()\nmodel.compile(optimizer={WRAPPED_SGD})\n",
        id="train-step-scales-through-self-optimizer-and-clips",
    ),
    pytest.param(
        TF + WRAP_ONLY_STEP + POLICY + f"model = Model()\nmodel.compile(optimizer={SGD})\n",
        SHIM
        + TF
        + WRAP_ONLY_STEP
        + POLICY
        + f"model = Model()\nmodel.compile(optimizer={WRAPPED_SGD})\n",
        id="train-step-applies-gradients-of-the-unscaled-loss",
    ),
    pytest.param(
        TF
        + "def main():\n    "
        + POLICY
        + f"    model = build()\n    model.compile(optimizer={SGD})\n"
        "    print(model.optimizer.dynamic_counter)\n",
        SHIM
        + TF
        + "def main():\n    "
        + POLICY
        + f"    model = build()\n    model.compile(optimizer={WRAPPED_SGD})\n"
        "    print(model.optimizer.dynamic_counter)\n",
        id="policy-and-compile-in-one-function",
    ),
    pytest.param(
        _compiled(
            f"model.compile(optimizer={SGD})\n",
            before=TF
            + "tf.keras.mixed_precision.set_global_policy("
            + "tf.keras.mixed_precision.Policy('mixed_float16'))\n",
        ),
        SHIM
        + _compiled(
            f"model.compile(optimizer={WRAPPED_SGD})\n",
            before=TF
            + "tf.keras.mixed_precision.set_global_policy("
            + "tf.keras.mixed_precision.Policy('mixed_float16'))\n",
        ),
        id="a-policy-object",
    ),
    pytest.param(
        _compiled(
            f"model.compile(optimizer={SGD})\n",
            before=TF
            + "policy = tf.keras.mixed_precision.Policy('mixed_float16')\n"
            + "tf.keras.mixed_precision.set_global_policy(policy)\n",
        ),
        SHIM
        + _compiled(
            f"model.compile(optimizer={WRAPPED_SGD})\n",
            before=TF
            + "policy = tf.keras.mixed_precision.Policy('mixed_float16')\n"
            + "tf.keras.mixed_precision.set_global_policy(policy)\n",
        ),
        id="a-policy-object-bound-to-a-name-as-efficientdet-does",
    ),
    pytest.param(
        _compiled(
            f"model.compile(optimizer={SGD})\n",
            before=TF
            + "from tensorflow.keras import mixed_precision\n"
            + "mixed_precision.set_global_policy('mixed_float16')\n",
        ),
        SHIM
        + _compiled(
            f"model.compile(optimizer={WRAPPED_SGD})\n",
            before=TF
            + "from tensorflow.keras import mixed_precision\n"
            + "mixed_precision.set_global_policy('mixed_float16')\n",
        ),
        id="the-setter-imported-by-its-module",
    ),
    pytest.param(
        _compiled(f"model.compile(optimizer={SGD})\n", after=""),
        SHIM + _compiled(f"model.compile(optimizer={WRAPPED_SGD})\n", after=""),
        id="nothing-reads-tf24s-api-but-keras-3s-wrapper-counts-iterations-otherwise",
    ),
    pytest.param(
        TF
        + WRAP_ONLY_STEP.replace("self.optimizer", "self.opt")
        + POLICY
        + f"model = Model()\nmodel.compile(optimizer={SGD})\n",
        SHIM
        + TF
        + WRAP_ONLY_STEP.replace("self.optimizer", "self.opt")
        + POLICY
        + f"model = Model()\nmodel.compile(optimizer={WRAPPED_SGD})\n",
        id="apply-on-another-optimizer",
    ),
]


@pytest.mark.parametrize(("before", "after"), REWRITES)
def test_shim_wraps_compiles_optimizer(before, after):
    findings = assert_rewrites(before, after, "shim")
    assert [f.code for f in findings if f.fixed] == ["LSO023"]
    assert manual_codes(findings) == []  # LSO010/LSO011/LSO019 no longer report the reads


def test_the_fix_names_the_line_that_needs_tf24s_class():
    _, findings = rewrite(_compiled(f"model.compile(optimizer={SGD})\n"), "shim")
    (fix,) = findings
    assert (fix.line, fix.code) == (4, "LSO023")
    assert fix.message == (
        f"compile()'s optimizer -> {WRAPPED_SGD}: Keras 3's own wrapper lacks the TF 2.4 API "
        "used at line 5"
    )


# Not wrapped, and why: the reads stay reported (LSO019), the compile() call too (LSO023).
REFUSED = [
    pytest.param(
        _compiled(f"model.compile(optimizer={SGD})\n", before=TF + "if fp16:\n    " + POLICY),
        "no set_global_policy('mixed_float16') runs unconditionally before it",
        id="policy-set-conditionally",
    ),
    pytest.param(
        TF + "model = build()\n" + POLICY + f"model.compile(optimizer={SGD})\n" + READ,
        "`model` is not built after the policy is set (line 3) in the same function",
        id="model-built-before-the-policy",
    ),
    pytest.param(
        _compiled("model.compile(optimizer=make_optimizer())\n"),
        "`make_optimizer()` is not known to be a plain optimizer (a loss scale optimizer would "
        "be wrapped twice)",
        id="an-optimizer-of-unknown-kind",
    ),
    pytest.param(
        _compiled("model.compile(optimizer='my_optimizer')\n"),
        "'my_optimizer' is not an optimizer name Keras 2 and Keras 3 both know",
        id="an-unknown-optimizer-name",
    ),
    pytest.param(
        _compiled(
            f"model.compile(optimizer={SGD})\n",
            before=TF
            + POLICY
            + "if fp32:\n    tf.keras.mixed_precision.set_global_policy('float32')\n",
        ),
        "the policy is set more than once before it (lines [2, 4])",
        id="the-policy-set-again-before-compile",
    ),
    pytest.param(
        _compiled("model.compile(**settings)\n"),
        "its arguments are unpacked with * or **",
        id="unpacked-arguments",
    ),
    pytest.param(
        _compiled(f"model.compile(optimizer={SGD}, auto_scale_loss=False)\n"),
        "it passes Keras 3's auto_scale_loss",
        id="keras-3s-auto-scale-loss",
    ),
    pytest.param(
        TF + POLICY + "model = tf.keras.models.load_model(path)\n"
        f"model.compile(optimizer={SGD})\n" + READ,
        "`model` is restored by tensorflow.keras.models.load_model, with the policy it was saved "
        "with",
        id="a-restored-model-keeps-its-saved-policy",
    ),
]


def _installed(before: str) -> str:
    """`before` as the shim target writes it where compile() is left to Keras: compat_lso.install()
    after the imports (here `import tensorflow as tf`), so that it wraps as under `run`."""
    return SHIM + before.replace(TF, TF + INSTALL, 1)


INSTALL = "\ncompat_lso.install()\n"


@pytest.mark.parametrize(("before", "why"), REFUSED)
def test_shim_installs_where_it_cannot_prove_compile_wraps(before, why):
    findings = assert_rewrites(before, _installed(before), "shim")
    (compile_finding,) = [f for f in findings if f.code == "LSO023"]
    assert compile_finding.fixed and not compile_finding.note
    assert compile_finding.message == (
        f"model.compile() wraps with compat_lso's class (compat_lso.install() added): {why}"
    )
    assert manual_codes(findings) == []  # the read is compat_lso's class's after install()


def test_a_suppressed_compile_is_left_and_the_read_stays_reported():
    before = _compiled(f"model.compile(optimizer={SGD})  # compat-lso: ignore[LSO023]\n")
    assert manual_codes(assert_unchanged(before, "shim")) == ["LSO019"]


def test_a_policy_with_no_compile_in_the_file_installs_for_the_compile_elsewhere():
    # The train_step's `self.optimizer` is compile()'s wrapper, made in another module.
    before = TF + POLICY + WRAP_ONLY_STEP
    findings = assert_rewrites(before, _installed(before), "shim")
    (finding,) = findings
    assert (finding.code, finding.line, finding.fixed) == ("LSO023", 2, True)
    assert finding.message == (
        "tf.keras.mixed_precision.set_global_policy(): compile() elsewhere wraps with "
        "compat_lso's class (compat_lso.install() added)"
    )


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            TF + "if fp16:\n    " + POLICY + "model = build()\nmodel.compile(optimizer='adam')\n",
            id="a-conditional-policy-and-a-wrap",
        ),
        pytest.param(
            TF + POLICY + "m1 = build()\nm1.compile(optimizer=make())\n"
            "m2 = build()\nm2.compile(optimizer=make())\n",
            id="two-compiles-left-to-keras",
        ),
    ],
)
def test_install_is_added_once(before):
    text, _ = rewrite(before, "shim")
    assert text.count("compat_lso.install()") == 1
    assert text.count("import compat_lso") == 1
    assert rewrite(text, "shim")[0] == text  # a second run changes nothing


NOOPS = [
    pytest.param(
        _compiled(
            "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
            "model.compile(optimizer=opt)\n"
        )
        .replace("import tensorflow as tf\n", "import compat_lso\nimport tensorflow as tf\n")
        .replace("tf.keras.mixed_precision.LossScaleOptimizer", "compat_lso.LossScaleOptimizer"),
        id="the-file-makes-its-loss-scale-optimizer",
    ),
    pytest.param(
        _compiled(
            f"model.compile(optimizer={SGD})\n",
            before=TF + POLICY.replace("mixed_float16", "float32"),
        ),
        id="another-policy-compile-does-not-wrap",
    ),
    pytest.param(
        TF + "tf.keras.mixed_precision.set_global_policy('mixed_bfloat16')\n"
        "model = build()\nmodel.compile(optimizer=make())\n",
        id="bfloat16",
    ),
    pytest.param(
        SHIM + TF + INSTALL + POLICY + "model = build()\nmodel.compile(optimizer=make())\n" + READ,
        id="the-module-installs-already",
    ),
    pytest.param(TF + f"model = build()\nmodel.compile(optimizer={SGD})\n" + READ, id="no-policy"),
]


@pytest.mark.parametrize("before", NOOPS)
def test_shim_noop(before):
    findings = assert_unchanged(before, "shim")
    assert "LSO023" not in [f.code for f in findings]


def test_a_file_that_overrides_compile_installs():
    # keras-io's GAN: compile(d_optimizer, g_optimizer, loss_fn) stores the optimizers, which
    # Keras never wraps; `gan.compile(...)` is not Keras's, but what it passes on may be.
    before = (
        TF + "class GAN(tf.keras.Model):\n"
        "    def compile(self, d_optimizer, g_optimizer):\n"
        "        super().compile()\n"
        + POLICY
        + f"gan = GAN()\ngan.compile(d_optimizer={SGD}, g_optimizer={SGD})\n"
        "print(gan.optimizer.loss_scale)\n"
    )
    findings = assert_rewrites(before, _installed(before), "shim")
    (compile_finding,) = [f for f in findings if f.code == "LSO023"]
    assert "compile() is overridden at line 3" in compile_finding.message


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_other_targets_leave_compile_alone(target):
    text, findings = rewrite(_compiled(f"model.compile(optimizer={SGD})\n"), target)
    assert "compat_lso" not in text
    assert "LSO023" not in [f.code for f in findings]


def test_a_legacy_optimizer_is_wrapped_and_rewritten_together():
    # Found by the differential tests (docs/differential.md): LSO023's one edit over the whole
    # argument overlapped LSO024's inside it, and the file was left unchanged with an internal
    # error. The wrap is two insertions around the argument now.
    before = _compiled("model.compile(optimizer=tf.keras.optimizers.legacy.SGD(0.1))\n", after="")
    after = SHIM + _compiled(f"model.compile(optimizer={WRAPPED_SGD})\n", after="")
    findings = assert_rewrites(before, after, "shim")
    assert {f.code for f in findings if f.fixed and not f.note} == {"LSO023", "LSO024"}
