"""LSO011/LSO017 on keras3: a hasattr/getattr of a Keras 2 member follows the rewrite under it.

Keras 3's class lacks get_scaled_loss, get_unscaled_gradients, loss_scale, dynamic_counter and
dynamic: a feature test naming one is always False there, so code the codemod rewrote under it
would never run. keras2 (Keras 2) and shim (whose class keeps Keras 2's members) change nothing.
"""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, rewrite

NEW = "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
CLASS = "tf.keras.mixed_precision.LossScaleOptimizer"
STEP = """\
def step(opt, x):
    with tf.GradientTape() as tape:
        loss = f(x)
        if {scale}:
            loss = opt.get_scaled_loss(loss)
    grads = tape.gradient(loss, v)
    if {unscale}:
        grads = opt.get_unscaled_gradients(grads)
    opt.apply_gradients(zip(grads, v))
"""
STEP_AFTER = """\
def step(opt, x):
    with tf.GradientTape() as tape:
        loss = f(x)
        if {scale}:
            loss = opt.scale_loss(loss)
    grads = tape.gradient(loss, v)
    if {unscale}:
        pass
    opt.apply_gradients(zip(grads, v))
"""
HAS = 'hasattr(opt, "get_scaled_loss")'
HAS_UNSCALE = 'hasattr(opt, "get_unscaled_gradients")'

REWRITES = [
    pytest.param(
        NEW + STEP.format(scale=HAS, unscale=HAS_UNSCALE),
        NEW
        + STEP_AFTER.format(
            scale='hasattr(opt, "scale_loss")', unscale=f"isinstance(opt, {CLASS})"
        ),
        id="scale-guard-to-scale-loss-unscale-guard-to-the-class-the-file-names",
    ),
    pytest.param(
        NEW
        + STEP.format(scale="getattr(opt, 'get_scaled_loss', None) is not None", unscale="True"),
        NEW
        + STEP_AFTER.format(scale="getattr(opt, 'scale_loss', None) is not None", unscale="True"),
        id="getattr-is-not-none-keeps-its-quotes",
    ),
]


@pytest.mark.parametrize(("before", "after"), REWRITES)
def test_keras3_guard_follows_the_rewrite(before, after):
    findings = assert_rewrites(before, after, "keras3")
    assert not [f for f in findings if not f.fixed]


@pytest.mark.parametrize(("before", "after"), REWRITES)
@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_keep_the_guards(before, after, target):
    """Keras 2 and the shim's class have the members: the guard means what it meant."""
    text, findings = rewrite(before, target)
    assert text.count("get_scaled_loss") == before.count("get_scaled_loss")
    assert text.count("get_unscaled_gradients") == before.count("get_unscaled_gradients")
    assert not [f for f in findings if "always" in f.message]


REPORTS = [
    pytest.param(
        "import tensorflow as tf\n" + STEP.format(scale=HAS, unscale=HAS_UNSCALE),
        [(8, "get_unscaled_gradients")],
        id="no-class-named-in-the-file-unscale-guard-reported",
    ),
    pytest.param(
        NEW + "def scaled(opt, loss):\n    if " + HAS + ":\n"
        "        return opt.get_scaled_loss(loss)\n    return loss\n",
        [(4, "get_scaled_loss")],
        id="guard-on-a-call-lso011-reports",
    ),
]


@pytest.mark.parametrize(("before", "guards"), REPORTS)
def test_keras3_reports_a_guard_it_cannot_follow(before, guards):
    _, findings = rewrite(before, "keras3")
    said = [
        (f.line, f.message)
        for f in findings
        if not f.fixed and f.code == "LSO011" and "always False on Keras 3" in f.message
    ]
    assert [line for line, _ in said] == [line for line, _ in guards]
    assert all(
        f"has no {member}" in message
        for (_, message), (_, member) in zip(said, guards, strict=True)
    )


TF_KERAS = "import tf_keras\nopt = tf_keras.mixed_precision.LossScaleOptimizer(sgd)\n"
NOOPS = [
    pytest.param(
        NEW + "if hasattr(model, 'get_scaled_loss'):\n    pass\n", id="nothing-done-to-it"
    ),
    pytest.param(
        NEW + "if hasattr(opt, 'get_config'):\n    print(opt.dynamic_counter)\n",
        id="not-a-keras2-member",
    ),
    pytest.param(
        TF_KERAS.replace("import tf_keras", "import tensorflow as tf\nimport tf_keras")
        + STEP.format(scale=HAS, unscale=HAS_UNSCALE),
        id="tf-keras-code-keeps-the-members",
    ),
]


@pytest.mark.parametrize("before", NOOPS)
@pytest.mark.parametrize("target", ["keras2", "shim", "keras3"])
def test_noop(before, target):
    """The guards stay as written (the shim target rewrites the constructor, not them)."""
    text, findings = rewrite(before, target)
    guards = [line for line in before.splitlines() if "hasattr" in line]
    assert guards == [line for line in text.splitlines() if "hasattr" in line]
    assert not [f for f in findings if "always" in f.message]


def test_each_guard_follows_the_calls_of_its_own_function():
    """`opt` in `scaled` (reported: no unscaling there) and in `step` (rewritten) read alike."""
    scaled = (
        "def scaled(opt, loss):\n    if " + HAS + ":\n        return opt.get_scaled_loss(loss)\n"
    )
    text, findings = rewrite(NEW + scaled + STEP.format(scale=HAS, unscale=HAS_UNSCALE), "keras3")
    assert text.count(HAS) == 1 and 'hasattr(opt, "scale_loss")' in text
    said = [f.line for f in findings if not f.fixed and "always False" in f.message]
    assert said == [4]
