"""LSO026: Keras 2's `lr=` in a Keras optimizer's constructor or config -> `learning_rate=`, on
every target; both given is reported (Keras 2 used lr). What each TF did with `lr=` was measured
on TF 2.15 (tests/old_code/test_install_keras2_lr.py's docstring): its default optimizers dropped
it (constructor and from_config), its legacy ones and get/deserialize of a config used it."""

import pytest

from codemods import table
from codemods.apply.engine import migrate
from tests.codemods.codemod_cases import assert_unchanged, manual_codes

TF = "import tensorflow as tf\npolicy = tf.keras.mixed_precision.Policy('mixed_float16')\n"

REWRITES = [
    pytest.param(
        "opt = tf.keras.optimizers.Adam(lr=1e-3, beta_1=0.5)\n",
        "opt = tf.keras.optimizers.Adam(learning_rate=1e-3, beta_1=0.5)\n",
        table.LR_DEFAULT_OPTIMIZER,
        id="keyword",
    ),
    pytest.param(
        "from tensorflow.keras.optimizers import SGD\nopt = SGD(\n    lr=0.1,\n    momentum=0.9)\n",
        "from tensorflow.keras.optimizers import SGD\nopt = SGD(\n    learning_rate=0.1,\n"
        "    momentum=0.9)\n",
        table.LR_DEFAULT_OPTIMIZER,
        id="imported-class-over-lines",
    ),
    pytest.param(
        "import keras\nopt = keras.optimizers.RMSprop(lr=0.1)\n",
        "import keras\nopt = keras.optimizers.RMSprop(learning_rate=0.1)\n",
        table.LR_DEFAULT_OPTIMIZER,
        id="standalone-keras",
    ),
    pytest.param(
        "opt = tf.keras.optimizers.get({'class_name': 'Adam', 'config': {'lr': 0.3}})\n",
        "opt = tf.keras.optimizers.get({'class_name': 'Adam', 'config': {'learning_rate': 0.3}})\n",
        table.LR_LEGACY_OPTIMIZER,
        id="config-in-get",
    ),
    pytest.param(
        'opt = tf.keras.optimizers.deserialize({"class_name": "SGD", "config": {"lr": 0.3}})\n',
        'opt = tf.keras.optimizers.deserialize({"class_name": "SGD", "config": '
        '{"learning_rate": 0.3}})\n',
        table.LR_LEGACY_OPTIMIZER,
        id="config-in-deserialize",
    ),
    pytest.param(
        "opt = tf.keras.optimizers.Adam.from_config({'lr': 0.2, 'beta_1': 0.5})\n",
        "opt = tf.keras.optimizers.Adam.from_config({'learning_rate': 0.2, 'beta_1': 0.5})\n",
        table.LR_DEFAULT_OPTIMIZER,
        id="config-in-from-config",
    ),
]


@pytest.mark.parametrize(("before", "after", "what"), REWRITES)
@pytest.mark.parametrize("target", table.TARGETS)
def test_lr_becomes_learning_rate_on_every_target_with_what_tf_2_15_did(
    before, after, what, target
):
    result = migrate(TF + before, target)
    assert result.text == TF + after
    [finding] = [f for f in result.findings if f.code == "LSO026"]
    assert finding.fixed and not finding.note
    assert finding.message.endswith(f"lr= -> learning_rate= (Keras 3 refuses lr; {what})")
    assert finding.line == 3 + before[: before.index("lr")].count("\n")


@pytest.mark.parametrize("target", table.TARGETS)
def test_a_legacy_optimizer_keeps_its_rate_on_keras2_and_is_lso024s_elsewhere(target):
    before = TF + "opt = tf.keras.optimizers.legacy.SGD(lr=0.1, momentum=0.9)\n"
    result = migrate(before, target)
    codes = [f.code for f in result.findings if f.fixed and not f.note]
    if target == "keras2":
        assert result.text == before.replace("lr=", "learning_rate=")
        assert codes == ["LSO026"]
        [finding] = result.findings
        assert table.LR_LEGACY_OPTIMIZER in finding.message
    else:  # LSO024 rewrites the call to Keras 3's SGD and renames lr= with it
        assert "tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)" in result.text
        assert "LSO026" not in codes


@pytest.mark.parametrize("target", table.TARGETS)
def test_both_lr_and_learning_rate_are_reported(target):
    for before in (
        "opt = tf.keras.optimizers.SGD(learning_rate=0.1, lr=0.7)\n",
        "opt = tf.keras.optimizers.Adam.from_config({'learning_rate': 0.1, 'lr': 0.7})\n",
    ):
        findings = [f for f in assert_unchanged(TF + before, target) if f.code == "LSO026"]
        assert manual_codes(findings) == ["LSO026"]
        assert "(Keras 2 used lr)" in findings[0].message


NOOPS = [
    pytest.param("opt = tf.keras.optimizers.SGD(**settings)\n", id="kwargs-not-seen"),
    pytest.param("opt = tf.keras.optimizers.get(config)\n", id="config-from-elsewhere"),
    pytest.param("opt = make_optimizer(lr=0.1)\n", id="not-a-keras-optimizer"),
    pytest.param(
        "schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.9)\n", id="a-schedule"
    ),
    pytest.param("opt = tf.keras.optimizers.Adam(learning_rate=lr)\n", id="a-variable-named-lr"),
]


@pytest.mark.parametrize("before", NOOPS)
@pytest.mark.parametrize("target", table.TARGETS)
def test_noop(before, target):
    assert not [f for f in assert_unchanged(TF + before, target) if f.code == "LSO026"]


def test_only_modules_that_use_mixed_precision():
    before = "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=1e-3)\n"
    assert migrate(before, "keras3").text == before


@pytest.mark.parametrize("target", table.TARGETS)
def test_the_prefilter_lets_a_file_with_lr_in(target):
    from codemods.io.prefilter import may_contain_targets

    # A module that uses mixed precision with no other word the prefilter looks for.
    module = "import tensorflow as tf\nprint(tf.keras.mixed_precision.global_policy())\n"
    for case in REWRITES:
        before = str(case.values[0])
        assert may_contain_targets((module + before).encode(), target), before
        assert migrate(module + before, target).text != module + before
