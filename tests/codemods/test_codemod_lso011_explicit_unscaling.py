"""LSO011 on keras3 where code between unscaling and apply_gradients reads the unscaled gradients:
both halves written out (codemods/rules/_explicit_unscaling.py), each equal to Keras 2's.

The forms are those real files showed (tests/codemods/forms/ reproduces several): clipping (BERT's
model_training_utils.py, ELECTRA's run_tf_squad.py, automl's train_lib.py), a loop over the
gradients (automl 17c4cac0d7), logging, accumulation within the function. What the rewrite keeps
in numbers is proven by the pattern scripts (tests/old_code/test_patterns.py: clipping,
logging and a loop over IndexedSlices gradients, with an inf step); here, which code is rewritten
and which is reported, and with what.
"""

import ast

import pytest

from codemods import table
from codemods.meaning.gradient_uses import GradientUses
from codemods.meaning.module import Context
from codemods.source import Source
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

TF = "import tensorflow as tf\n\n\n"
HEAD = (
    TF + "def step(opt, x, v):\n"
    "    with tf.GradientTape() as tape:\n"
    "        loss = tf.reduce_sum(x * v)\n"
    "        scaled = opt.{scale}(loss)\n"
    "    grads = {unscale}\n"
)
OLD_UNSCALE = "opt.get_unscaled_gradients(tape.gradient(scaled, v))"
NEW_UNSCALE = (
    "[None if grad is None else tf.math.scalar_mul(tf.cast(1 / opt.scale_loss(1.0), grad.dtype), "
    "grad) for grad in tape.gradient(scaled, v)]"
)
BACK = (
    "[None if grad is None else tf.math.scalar_mul(tf.cast(opt.scale_loss(1.0), grad.dtype), grad) "
    "for grad in {}]"
)


def before(body):
    return HEAD.format(scale="get_scaled_loss", unscale=OLD_UNSCALE) + body


def after(body):
    return HEAD.format(scale="scale_loss", unscale=NEW_UNSCALE) + body


CLIP = "    grads, norm = tf.clip_by_global_norm(grads, 1.0)\n    tf.print(norm)\n"

REWRITES = [
    pytest.param(
        CLIP + "    opt.apply_gradients(zip(grads, v))\n",
        CLIP + f"    opt.apply_gradients(zip({BACK.format('grads')}, v))\n",
        id="clipping-by-global-norm",
    ),
    pytest.param(
        "    tf.print(tf.linalg.global_norm(grads))\n    opt.apply_gradients(zip(grads, v))\n",
        "    tf.print(tf.linalg.global_norm(grads))\n"
        f"    opt.apply_gradients(zip({BACK.format('grads')}, v))\n",
        id="logging",
    ),
    pytest.param(
        "    for g, var in zip(grads, v):\n"
        "        tf.summary.histogram(var.name, g)\n"
        "    grads = [tf.clip_by_norm(g, 1.0) if g is not None else None for g in grads]\n"
        "    opt.apply_gradients(list(zip(grads, v)))\n",
        "    for g, var in zip(grads, v):\n"
        "        tf.summary.histogram(var.name, g)\n"
        "    grads = [tf.clip_by_norm(g, 1.0) if g is not None else None for g in grads]\n"
        f"    opt.apply_gradients(list(zip({BACK.format('grads')}, v)))\n",
        id="loop-over-grad-and-var-then-clip-each",
    ),
    pytest.param(
        "    total = [a + g for a, g in zip(total, grads)]\n"
        "    opt.apply_gradients(zip(total, v))\n",
        "    total = [a + g for a, g in zip(total, grads)]\n"
        f"    opt.apply_gradients(zip({BACK.format('total')}, v))\n",
        id="accumulated-in-the-function",
    ),
    pytest.param(
        "    tf.print(tf.linalg.global_norm(grads))\n"
        "    pairs = zip(grads, v)\n"
        "    opt.apply_gradients(pairs)\n",
        "    tf.print(tf.linalg.global_norm(grads))\n"
        "    pairs = zip(grads, v)\n"
        "    opt.apply_gradients([(None if grad is None else tf.math.scalar_mul("
        "tf.cast(opt.scale_loss(1.0), grad.dtype), grad), var) for grad, var in pairs])\n",
        id="pairs-through-a-name",
    ),
]


@pytest.mark.parametrize(("body", "expected"), REWRITES)
def test_keras3_unscales_explicitly_and_scales_back_at_apply_gradients(body, expected):
    findings = assert_rewrites(before(body), after(expected), "keras3")
    assert manual_codes(findings) == []
    (fix,) = [f for f in findings if f.code == "LSO011" and not f.note]
    assert fix.line == 7
    assert fix.message.startswith(
        "opt.get_scaled_loss() -> scale_loss(), unscaled explicitly at line 8, scaled back at line "
    )
    assert fix.help == table.KERAS3_BEHAVIOUR


def test_a_function_that_only_unscales_says_so():
    # aws-samples/deep-learning-models' ALBERT pretraining (issue 30): the loss is scaled in one
    # function (reported there), the accumulated gradients unscaled in another; the fix line at
    # the unscaling said `get_scaled_loss() -> scale_loss()`, which no line of it was.
    findings = assert_rewrites(
        TF + "def allreduce(opt, scaled_grads, v):\n"
        "    grads = opt.get_unscaled_gradients(scaled_grads)\n"
        "    grads, norm = tf.clip_by_global_norm(grads, 1.0)\n"
        "    opt.apply_gradients(zip(grads, v))\n",
        TF + "def allreduce(opt, scaled_grads, v):\n"
        "    grads = [None if grad is None else tf.math.scalar_mul("
        "tf.cast(1 / opt.scale_loss(1.0), grad.dtype), grad) for grad in scaled_grads]\n"
        "    grads, norm = tf.clip_by_global_norm(grads, 1.0)\n"
        f"    opt.apply_gradients(zip({BACK.format('grads')}, v))\n",
        "keras3",
    )
    (fix,) = [f for f in findings if f.code == "LSO011" and not f.note]
    assert (fix.line, fix.message) == (
        5,
        "opt.get_unscaled_gradients() -> times 1 / scale_loss(1.0), scaled back at line 7",
    )


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_both_methods(target):
    body = CLIP + "    opt.apply_gradients(zip(grads, v))\n"
    text, _ = rewrite(before(body), target)
    assert "get_unscaled_gradients" in text and "scale_loss(1.0)" not in text


def test_a_scale_that_may_not_be_a_power_of_two_gets_a_note_at_apply_gradients():
    source = (
        TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), "
        "initial_scale=flags.scale)\n\n\n"
        + before(CLIP + "    opt.apply_gradients(zip(grads, v))\n").removeprefix(TF)
    )
    _, findings = rewrite(source, "keras3")
    notes = [f for f in findings if f.code == "LSO011" and f.note]
    assert [(f.line, f.message) for f in notes] == [
        (
            14,
            "scaled back exactly only for a power-of-two scale; `flags.scale` (line 4) is only "
            "known at run time",
        )
    ]


def test_a_power_of_two_scale_gets_no_such_note():
    source = (
        TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), "
        "initial_scale=2**10)\n\n\n"
        + before(CLIP + "    opt.apply_gradients(zip(grads, v))\n").removeprefix(TF)
    )
    _, findings = rewrite(source, "keras3")
    assert not [f for f in findings if f.code == "LSO011" and f.note and "power" in f.message]


# Where they go out of sight, the explicit unscaling still gives Keras 2's values, and every
# apply_gradients of the module is scaled back (_optimizer_wide.escaping): rewritten, with a note
# where they leave.
ESCAPING = [
    pytest.param(
        "    for i, g in enumerate(grads):\n        accumulated[i].assign_add(g)\n",
        "`accumulated[i].assign_add(g)` (line 10) may keep them",
        id="accumulated-into-variables-applied-elsewhere",
    ),
    pytest.param(
        "    accumulator(grads)\n",
        "`accumulator(grads)` (line 9) may keep them",
        id="handed-to-an-accumulator",
    ),
    pytest.param(
        CLIP + "    return grads\n",
        "returned at line 11",
        id="returned",
    ),
    pytest.param(
        "    self.grads = grads\n    opt.apply_gradients(zip(grads, v))\n",
        "stored in `self.grads`",
        id="stored-in-an-attribute",
    ),
]
REPORTS = [
    pytest.param(
        CLIP + "    opt.inner_optimizer.apply_gradients(zip(grads, v))\n",
        "they reach `opt.inner_optimizer.apply_gradients`",
        id="applied-by-another-optimizer",
    ),
    pytest.param(
        "    grads = [hvd.allreduce(g) for g in grads]\n"
        "    opt.apply_gradients(zip(grads, v), experimental_aggregate_gradients=False)\n",
        "passes experimental_aggregate_gradients, which Keras 3's does not take",
        id="apply-gradients-with-keras-2-arguments",
    ),
]


# What stops the per-function rewrite but not the optimizer-wide one, which then rewrites them
# (test_codemod_lso011_optimizer_wide.py): a closure reading them, a second apply_gradients.
PER_FUNCTION_ONLY = [
    pytest.param(
        "    def log():\n        tf.print(grads)\n    opt.apply_gradients(zip(grads, v))\n",
        "read in a nested function",
        id="read-by-a-closure",
    ),
    pytest.param(
        CLIP + "    opt.apply_gradients(zip(grads, v))\n    opt.apply_gradients(zip(other, v))\n",
        "the apply_gradients at line 12 gets other gradients",
        id="another-apply-gradients-in-the-function",
    ),
]


@pytest.mark.parametrize(("body", "reason"), ESCAPING)
def test_keras3_unscales_explicitly_where_they_go_out_of_sight_with_a_note_there(body, reason):
    source = before(body)
    text, findings = rewrite(source, "keras3")
    assert "get_scaled_loss" not in text and "get_unscaled_gradients" not in text
    assert "1 / opt.scale_loss(1.0)" in text and rewrite(text, "keras3")[0] == text
    for line in text.splitlines():
        if "apply_gradients(" in line:
            assert "tf.cast(opt.scale_loss(1.0), grad.dtype), grad) for grad in grads]" in line
    assert manual_codes(findings) == []
    lines = source.splitlines()
    (note,) = [f for f in findings if f.code == "LSO011" and "out of sight" in f.message]
    assert note.note and "scale them back there" in note.help
    escape = lines[note.line - 1]  # the line of `body` where they leave, not its apply_gradients
    assert escape in body.splitlines() and "apply_gradients" not in escape


@pytest.mark.parametrize(("body", "reason"), REPORTS)
def test_keras3_reports_both_calls_where_the_unscaled_gradients_may_go_unseen(body, reason):
    findings = assert_unchanged(before(body), "keras3")
    assert manual_codes(findings) == ["LSO011", "LSO011"]
    if "does not take" in reason:  # the help says what to drop (below)
        return
    assert all(f.help == table.RULES_BY_CODE["LSO011"].instruction_on("keras3") for f in findings)


@pytest.mark.parametrize(
    ("keyword", "also"),
    [
        pytest.param(
            "experimental_aggregate_gradients=False",
            "; Keras 3 sums over replicas again: divide reduced gradients by num_replicas_in_sync",
            id="aggregate",
        ),
        pytest.param("name='apply'", "", id="name"),
    ],
)
def test_keras3_help_for_an_apply_gradients_keyword_is_to_drop_it_and_run_again(keyword, also):
    # danijar/dreamerv2's tfutils.py: the general help (hand the still-scaled gradients straight
    # to apply_gradients) would clip and all-reduce scaled gradients there; without the keyword
    # the codemod writes the unscaling out itself.
    source = before(CLIP + f"    opt.apply_gradients(zip(grads, v), {keyword})\n")
    line = 1 + source[: source.index("opt.apply_gradients")].count("\n")
    findings = assert_unchanged(source, "keras3")
    assert [f.help for f in findings if f.code == "LSO011"] == [
        f"drop {keyword.split('=')[0]} (line {line}) and rerun the codemod{also}"
    ] * 2
    dropped = source.replace(f", {keyword})", ")")
    assert manual_codes(rewrite(dropped, "keras3")[1]) == []


@pytest.mark.parametrize(("body", "reason"), ESCAPING + REPORTS + PER_FUNCTION_ONLY)
def test_the_forward_analysis_says_what_is_in_the_way(body, reason):
    source = before(body)
    tree = ast.parse(source)
    context = Context(Source(source), tree, "keras3", frozenset(table.RULES_BY_CODE))
    unscale = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "get_unscaled_gradients"
    )
    found = GradientUses(context).of(unscale)
    if found.blocked:
        assert reason in found.blocked, found.blocked
    else:  # it reaches an apply_gradients the rule refuses (checked by the test above)
        assert found.applies, reason


def test_the_forward_analysis_follows_clipping_to_the_apply_gradients_only():
    source = before(CLIP + "    opt.apply_gradients(zip(grads, v))\n")
    tree = ast.parse(source)
    context = Context(Source(source), tree, "keras3", frozenset(table.RULES_BY_CODE))
    unscale = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "get_unscaled_gradients"
    )
    found = GradientUses(context).of(unscale)
    assert (found.blocked, [a.lineno for a in found.applies]) == ("", [11])


def test_an_apply_the_drop_both_rewrite_made_is_not_scaled_back_by_the_escaping_one():
    # step(): drop-both (Keras 3's division unscales there); compute(): its unscaled gradients
    # leave the module, written out; scaling back step()'s apply would apply gradients * scale.
    source = TF + (
        "def step(opt, x, v):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = opt.get_scaled_loss(tf.reduce_sum(x * v))\n"
        "    grads = opt.get_unscaled_gradients(tape.gradient(loss, v))\n"
        "    opt.apply_gradients(zip(grads, v))\n"
        "def compute(opt, x, v):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = opt.get_scaled_loss(tf.reduce_sum(x * v))\n"
        "    return opt.get_unscaled_gradients(tape.gradient(loss, v))\n"
    )
    text, findings = rewrite(source, "keras3")
    assert "    grads = tape.gradient(loss, v)\n    opt.apply_gradients(zip(grads, v))\n" in text
    assert "return [None if grad is None else tf.math.scalar_mul(tf.cast(1 / opt.scale_loss" in text
    assert text.count("scale_loss(1.0)") == 1 and manual_codes(findings) == []
    assert any("out of sight: returned by compute()" in f.message for f in findings)
