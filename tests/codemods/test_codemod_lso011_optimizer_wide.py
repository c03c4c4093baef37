"""LSO011 on keras3, optimizer-wide (codemods/rules/_optimizer_wide.py, with the reach analysis
codemods/meaning/gradient_reach.py): where the unscaled gradients leave their function, every
get_unscaled_gradients of the optimizer is written out and every apply_gradients of it in its home
(the class of `self._opt`, the function binding `opt`) scales back what it gets.

The forms are those real files showed (tests/codemods/forms/ reproduces several): an
accumulator object read by another closure (BERT's model_training_utils.py), a private method
returning them or keeping them in `self._acc` (TensorFlowTTS's base_trainer.py), a nested step
function returning two groups (mlcommons' resnet_runnable.py, HugeCTR's test_sparse_emb_demo.py),
a module function that reads them, a closure, a second apply_gradients. The numbers are
proven by the pattern scripts manual_accumulator_closure.py, manual_trainer_returns_accumulates.py
and manual_unscale_twice_returned.py (tests/old_code/test_patterns.py); here, what is rewritten
and what is reported, with what.
"""

import pytest

from codemods import table
from tests.codemods.codemod_cases import assert_rewrites, manual_codes, rewrite

TF = "import tensorflow as tf\n\n\n"


def unscaled(grads, opt="opt", var="grad"):
    return (
        f"[None if {var} is None else tf.math.scalar_mul(tf.cast(1 / {opt}.scale_loss(1.0), "
        f"{var}.dtype), {var}) for {var} in {grads}]"
    )


def back(grads, opt="opt", var="grad"):
    return (
        f"[None if {var} is None else tf.math.scalar_mul(tf.cast({opt}.scale_loss(1.0), "
        f"{var}.dtype), {var}) for {var} in {grads}]"
    )


ACCUMULATOR = (
    TF + "def train(opt, model, data):\n"
    "    acc = GradientAccumulator()\n"
    "\n"
    "    def forward(x):\n"
    "        with tf.GradientTape() as tape:\n"
    "            scaled = opt.{scale}(model(x))\n"
    "        grads = {unscale}\n"
    "        acc.add_gradients(grads)\n"
    "\n"
    "    def step():\n"
    "        grads, _ = tf.clip_by_global_norm(acc.gradients, 1.0)\n"
    "        opt.apply_gradients(zip({applied}, model.trainable_variables))\n"
    "        acc.reset()\n"
)
TAPE = "tape.gradient(scaled, model.trainable_variables)"

TRAINER = (
    TF + "class Trainer:\n"
    "    def __init__(self, opt, steps):\n"
    "        self._opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
    "        self._acc = GradientAccumulator()\n"
    "        self.steps = steps\n"
    "\n"
    "    def _gradients(self, x):\n"
    "        with tf.GradientTape() as tape:\n"
    "            scaled = self._opt.{scale}(self.model(x))\n"
    "        grads = {unscale}\n"
    "        if self.steps > 1:\n"
    "            self._acc(grads)\n"
    "        if self.steps == 1:\n"
    "            return grads, scaled\n"
    "        else:\n"
    "            return scaled\n"
    "\n"
    "    def step(self, x):\n"
    "        if self.steps == 1:\n"
    "            grads, loss = self._gradients(x)\n"
    "            self._opt.apply_gradients(zip({first}, self.variables))\n"
    "        else:\n"
    "            loss = self._gradients(x)\n"
    "            self._opt.apply_gradients(zip({second}, self.variables))\n"
    "            self._acc.reset()\n"
    "        return loss\n"  # the tuple's other element, or the loss alone: the branches tell
)
TRAINER_TAPE = "tape.gradient(scaled, self.variables)"

RETURNED = (
    TF + "def train(model, data):\n"
    "    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
    "\n"
    "    def local_step(x):\n"
    "        with tf.GradientTape() as tape:\n"
    "            scaled = opt.{scale}(model(x))\n"
    "        dense, emb = tape.gradient(scaled, [model.dense, model.emb])\n"
    "        dense = {dense}\n"
    "        emb = {emb}\n"
    "        return scaled, dense, emb\n"
    "\n"
    "    for x in data:\n"
    "        loss, dense, emb = local_step(x)\n"
    "        _summarize(dense)\n"
    "        opt.apply_gradients(zip({applied}, model.variables))\n"
    "\n"
    "\n"
    "def _summarize(grads):\n"
    '    tf.summary.scalar("norm", tf.linalg.global_norm(grads))\n'
)

CLOSURE = (
    TF + "def step(opt, x, v):\n"
    "    with tf.GradientTape() as tape:\n"
    "        scaled = opt.{scale}(tf.reduce_sum(x * v))\n"
    "    grads = {unscale}\n"
    "    def log():\n"
    "        tf.print(grads)\n"
    "    opt.apply_gradients(zip({applied}, v))\n"
    "    opt.apply_gradients(zip({other}, v))\n"
)
CLOSURE_TAPE = "tape.gradient(scaled, v)"

REWRITES = [
    pytest.param(
        ACCUMULATOR.format(
            scale="get_scaled_loss", unscale=f"opt.get_unscaled_gradients({TAPE})", applied="grads"
        ),
        ACCUMULATOR.format(scale="scale_loss", unscale=unscaled(TAPE), applied=back("grads")),
        "opt.get_scaled_loss() -> scale_loss(), unscaled explicitly at line 10, "
        "scaled back at line 15",
        id="accumulator-object-read-by-another-closure",
    ),
    pytest.param(
        TRAINER.format(
            scale="get_scaled_loss",
            unscale=f"self._opt.get_unscaled_gradients({TRAINER_TAPE})",
            first="grads",
            second="self._acc.gradients",
        ),
        TRAINER.format(
            scale="scale_loss",
            unscale=unscaled(TRAINER_TAPE, "self._opt"),
            first=back("grads", "self._opt"),
            second=back("self._acc.gradients", "self._opt"),
        ),
        "self._opt.get_scaled_loss() -> scale_loss(), unscaled explicitly at line 13, "
        "scaled back at lines 24, 27",
        id="private-method-returns-or-accumulates-in-a-private-attribute",
    ),
    pytest.param(
        RETURNED.format(
            scale="get_scaled_loss",
            dense="opt.get_unscaled_gradients(dense)",
            emb="opt.get_unscaled_gradients(emb)",
            applied="dense + emb",
        ),
        RETURNED.format(
            scale="scale_loss",
            dense=unscaled("dense"),
            emb=unscaled("emb"),
            applied=back("dense + emb"),
        ),
        "opt.get_scaled_loss() -> scale_loss(), unscaled explicitly at lines 11, 12, "
        "scaled back at line 18",
        id="two-unscalings-returned-by-a-nested-step-read-by-a-module-function",
    ),
    pytest.param(
        CLOSURE.format(
            scale="get_scaled_loss",
            unscale=f"opt.get_unscaled_gradients({CLOSURE_TAPE})",
            applied="grads",
            other="other",
        ),
        CLOSURE.format(
            scale="scale_loss",
            unscale=unscaled(CLOSURE_TAPE),
            applied=back("grads"),
            other=back("other"),
        ),
        "opt.get_scaled_loss() -> scale_loss(), unscaled explicitly at line 7, "
        "scaled back at lines 10, 11",
        id="read-by-a-closure-and-a-second-apply-gradients",
    ),
]


@pytest.mark.parametrize(("before", "after", "message"), REWRITES)
def test_keras3_unscales_explicitly_and_every_apply_gradients_scales_back(before, after, message):
    findings = assert_rewrites(before, after, "keras3")
    assert manual_codes(findings) == []  # no LSO021 left at an apply_gradients it made right
    (fix,) = [f for f in findings if f.code == "LSO011" and not f.note]
    assert fix.message == message
    assert fix.help == table.KERAS3_BEHAVIOUR


def test_a_scaling_apart_from_every_apply_gradients_gets_the_tracing_note():
    source = TRAINER.format(
        scale="get_scaled_loss",
        unscale=f"self._opt.get_unscaled_gradients({TRAINER_TAPE})",
        first="grads",
        second="self._acc.gradients",
    )
    _, findings = rewrite(source, "keras3")
    notes = [(f.line, f.message) for f in findings if f.code == "LSO011" and f.note]
    assert notes == [
        (
            12,
            "traced before the first apply_gradients, this scale_loss() keeps initial_scale",
        )
    ]


def test_a_scale_that_may_not_be_a_power_of_two_gets_a_note_at_each_apply_gradients():
    source = TRAINER.format(
        scale="get_scaled_loss",
        unscale=f"self._opt.get_unscaled_gradients({TRAINER_TAPE})",
        first="grads",
        second="self._acc.gradients",
    ).replace("LossScaleOptimizer(opt)", "LossScaleOptimizer(opt, initial_scale=1000)")
    _, findings = rewrite(source, "keras3")
    notes = [f.line for f in findings if f.code == "LSO011" and "power-of-two" in f.message]
    assert notes == [24, 27]


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_both_methods(target):
    source = ACCUMULATOR.format(
        scale="get_scaled_loss", unscale=f"opt.get_unscaled_gradients({TAPE})", applied="grads"
    )
    text, _ = rewrite(source, target)
    assert "get_unscaled_gradients" in text and "scale_loss(1.0)" not in text


def _accumulator(setup="    acc = GradientAccumulator()\n", step_extra=""):
    return (
        ACCUMULATOR.format(
            scale="get_scaled_loss", unscale=f"opt.get_unscaled_gradients({TAPE})", applied="grads"
        ).replace("    acc = GradientAccumulator()\n", setup)
        + step_extra
    )


REPORTS = [
    pytest.param(
        TF + "def compute_gradients(opt, model, x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        scaled = opt.get_scaled_loss(model(x))\n"
        "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, model.variables))\n"
        "    return scaled, grads\n",
        "returned by compute_gradients() (line 8), which other modules may call",
        id="returned-by-a-public-function",
    ),
    pytest.param(
        _accumulator(setup="    acc = make_accumulator()\n"),
        "`acc` keeps them (line 11) and is not built here by a class call",
        id="accumulator-from-a-factory",
    ),
    pytest.param(
        _accumulator()
        .replace("def train(opt, model, data):", "def train(opt, model, data, acc):")
        .replace("    acc = GradientAccumulator()\n", ""),
        "`acc` keeps them (line 10) and is a parameter: its callers may read it",
        id="accumulator-a-parameter",
    ),
    pytest.param(
        _accumulator().replace(
            "acc.add_gradients(grads)", "tf.nest.map_structure(lambda g: acc.add(g), grads)"
        ),
        "(line 11) hands them to a function",
        id="handed-to-a-function-by-tensorflow",
    ),
    pytest.param(
        _accumulator(step_extra="    return acc\n"),
        "`acc`, which keeps them (line 11), is used at line 17",
        id="accumulator-handed-on",
    ),
    pytest.param(
        TRAINER.format(
            scale="get_scaled_loss",
            unscale=f"self._opt.get_unscaled_gradients({TRAINER_TAPE})",
            first="grads",
            second="self._acc.gradients",
        ).replace("self._acc", "self.acc"),
        "`self.acc` keeps them (line 15) and is public: other modules may read it",
        id="accumulator-a-public-attribute",
    ),
    pytest.param(
        _accumulator().replace(
            "opt.apply_gradients(zip(grads", "other_opt.apply_gradients(zip(grads"
        ),
        "reach `other_opt.apply_gradients` (line 15)",
        id="applied-by-another-optimizer",
    ),
    pytest.param(
        _accumulator().replace(
            "trainable_variables))\n        acc.reset",
            "trainable_variables), 1.0)\n        acc.reset",
        ),
        "the apply_gradients at line 15 passes a second argument, which Keras 3's does not take",
        id="an-apply-gradients-with-a-second-argument",
    ),
    pytest.param(
        TRAINER.format(
            scale="get_scaled_loss",
            unscale=f"self._opt.get_unscaled_gradients({TRAINER_TAPE})",
            first="grads",
            second="self._acc.gradients",
        )
        + "\n    def run(self):\n        return tf.function(self._gradients)\n",
        "_gradients() is used as a value at line 32",
        id="private-method-used-as-a-value",
    ),
]


NEGATIVE_INDEX = (
    TF + "def train(model, data):\n"
    "    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
    "\n"
    "    def _step(x):\n"
    "        with tf.GradientTape() as tape:\n"
    "            scaled = opt.get_scaled_loss(model(x))\n"
    "        grads = opt.get_unscaled_gradients(tape.gradient(scaled, model.variables))\n"
    "        return grads, scaled\n"
    "\n"
    "    for x in data:\n"
    "        out = _step(x)\n"
    "        keep(out[-2])\n"
    "        opt.apply_gradients(zip(out[0], model.variables))\n"
)
REPORTS.append(
    pytest.param(
        NEGATIVE_INDEX, "`keep(out[-2])` (line 15) may keep them", id="element-by-negative-index"
    )
)


# What only takes them out of sight: the explicit unscaling keeps Keras 2's values wherever they
# go, and every apply_gradients of the module (all on the same receiver) is scaled back
# (_optimizer_wide.escaping): rewritten, with a note where they are lost from sight.
ESCAPING = {
    "returned-by-a-public-function", "accumulator-from-a-factory", "accumulator-a-parameter",
    "handed-to-a-function-by-tensorflow", "accumulator-handed-on",
    "accumulator-a-public-attribute", "private-method-used-as-a-value",
    "element-by-negative-index",
}  # fmt: skip


@pytest.mark.parametrize(("before", "reason"), [p for p in REPORTS if p.id in ESCAPING])
def test_keras3_unscales_explicitly_with_a_note_where_they_go_out_of_sight(before, reason):
    text, findings = rewrite(before, "keras3")
    assert "get_scaled_loss" not in text and "get_unscaled_gradients" not in text
    assert rewrite(text, "keras3")[0] == text
    applies = [line for line in text.splitlines() if "apply_gradients(" in line]
    assert all("scale_loss(1.0), grad.dtype), grad) for grad in" in line for line in applies)
    assert "LSO011" not in manual_codes(findings)
    notes = [f for f in findings if f.code == "LSO011" and "out of sight" in f.message]
    assert notes and any(reason in f.message for f in notes), [f.message for f in notes]
    assert all(f.note and "scale them back there" in f.help for f in notes)


@pytest.mark.parametrize(("before", "reason"), [p for p in REPORTS if p.id not in ESCAPING])
def test_keras3_reports_every_call_with_what_takes_them_out_of_sight(before, reason):
    text, findings = rewrite(before, "keras3")
    if text != before:  # LSO021 scales back an apply elsewhere, saying LSO011's calls undo it
        assert "scale_loss(1.0)" in text and "scale_loss(" not in before
        assert {f.code for f in findings if f.fixed and not f.note} >= {"LSO021"}
        notes = [f.message for f in findings if f.code == "LSO021" and f.note]
        assert any("LSO011 at line" in note for note in notes)
    own = [f for f in findings if f.code == "LSO011" and not f.fixed]
    assert len(own) == before.count("get_scaled_loss(") + before.count("get_unscaled_gradients(")
    for finding in own:
        assert reason in finding.message, finding.message
        assert finding.help == table.RULES_BY_CODE["LSO011"].instruction_on("keras3")


def test_keras3_notes_gradients_kept_in_a_global():
    before = (
        TF + "def forward(opt, model, x):\n"
        "    global grads\n"
        "    with tf.GradientTape() as tape:\n"
        "        scaled = opt.get_scaled_loss(model(x))\n"
        "    grads = opt.get_unscaled_gradients(tape.gradient(scaled, model.variables))\n"
    )
    text, findings = rewrite(before, "keras3")
    assert "1 / opt.scale_loss(1.0)" in text and manual_codes(findings) == []
    (note,) = [f for f in findings if "out of sight" in f.message]
    assert note.line == 8 and "`grads` is global or nonlocal" in note.message


# bryanlimy/tf2-cyclegan's optimizer.py: a wrapper whose methods of the same names call the loss
# scale optimizer's. `self.get_unscaled_gradients(...)` is the class's own method: kept, a note;
# the optimizer's calls inside it are written out, and its apply_gradients scaled back.
WRAPPER = (
    TF + "class Optimizer:\n"
    "    def __init__(self, lr):\n"
    "        self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(\n"
    "            tf.keras.optimizers.Adam(lr))\n"
    "    def get_scaled_loss(self, loss):\n"
    "        return self.optimizer.get_scaled_loss(loss)\n"
    "    def get_unscaled_gradients(self, scaled_gradients):\n"
    "        return self.optimizer.get_unscaled_gradients(scaled_gradients)\n"
    "    def update(self, model, loss, tape):\n"
    "        gradients = tape.gradient(loss, model.trainable_variables)\n"
    "        gradients = self.get_unscaled_gradients(gradients)\n"
    "        self.optimizer.apply_gradients(zip(gradients, model.trainable_variables))\n"
)


def test_a_wrappers_own_method_is_kept_and_the_optimizers_calls_in_it_written_out():
    text, findings = rewrite(WRAPPER, "keras3")
    assert "        return self.optimizer.scale_loss(loss)\n" in text
    assert "tf.cast(1 / self.optimizer.scale_loss(1.0), grad.dtype), grad) for grad in " in text
    assert "        gradients = self.get_unscaled_gradients(gradients)\n" in text
    back = "tf.cast(self.optimizer.scale_loss(1.0), grad.dtype), grad) for grad in gradients]"
    assert back in text
    assert manual_codes(findings) == []
    notes = {(f.line, f.message) for f in findings if f.code == "LSO011" and f.note}
    assert (14, "self.get_unscaled_gradients(): this class's own method") in notes
    assert any(line == 11 and "out of sight" in message for line, message in notes)
