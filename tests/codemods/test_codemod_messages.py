"""What the findings say: the messages a user reads, per kind of finding.

Added after mutation testing (docs/testing-quality.md): replacing these messages with None left
every other test green, so nothing checked what a user is told.
"""

from __future__ import annotations

from codemods import table
from codemods.engine import migrate
from codemods.table import Target

TF = "import tensorflow as tf\n"


def _messages(source: str, target: Target = "keras2") -> list[tuple[str, bool, str]]:
    return [(f.code, f.fixed, f.message) for f in migrate(TF + source, target).findings]


def _reported(what: str, code: str) -> str:
    """A report: what was found, then the rule's instruction for the user."""
    return f"{what}: {table.RULES_BY_CODE[code].instruction}"


def test_graph_rewrite_is_reported_as_removed():
    source = "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n"
    what = "tf.train.experimental.enable_mixed_precision_graph_rewrite was removed"
    assert _messages(source) == [("LSO008", False, _reported(what, "LSO008"))]


def test_an_unknown_member_is_reported_as_removed():
    source = "policy = tf.keras.mixed_precision.experimental.get_layer_policy(layer)\n"
    what = "tf.keras.mixed_precision.experimental.get_layer_policy was removed"
    assert _messages(source) == [("LSO012", False, _reported(what, "LSO012"))]


def test_a_rename_says_old_and_new():
    source = "tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n"
    assert _messages(source) == [
        (
            "LSO004",
            True,
            "tf.keras.mixed_precision.experimental.set_policy -> "
            "tf.keras.mixed_precision.set_global_policy",
        )
    ]


def test_a_reference_with_no_safe_rewrite_names_the_target():
    source = "class MyOptimizer(tf.keras.mixed_precision.experimental.LossScaleOptimizer):\n"
    source += "    pass\n"
    targets: tuple[Target, ...] = ("keras2", "keras3")
    for target in targets:
        what = (
            "tf.keras.mixed_precision.experimental.LossScaleOptimizer has no safe rewrite on "
            f"--target {target}"
        )
        assert _messages(source, target) == [("LSO003", False, _reported(what, "LSO003"))]


LSO = "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, {})\n"
DLS = "tf.mixed_precision.experimental.DynamicLossScale"


def test_a_loss_scale_that_cannot_be_translated_says_why():
    # Each reason is what the user has to fix by hand; the call is left as written.
    cases = {
        "loss_scale=True": "loss_scale=True is only known at run time",
        f"{DLS}(8, 2, 2.0, 5)": "the loss scale has unexpected arguments",
        f"{DLS}(8, initial_loss_scale=4)": "initial_loss_scale is given twice",
    }
    for argument, why in cases.items():
        what = f"tf.keras.mixed_precision.experimental.LossScaleOptimizer not rewritten: {why}"
        result = migrate(TF + LSO.format(argument), "keras2")
        assert result.text == TF + LSO.format(argument), argument
        assert [(f.code, f.fixed, f.message) for f in result.findings] == [
            ("LSO001", False, _reported(what, "LSO001"))
        ], argument
