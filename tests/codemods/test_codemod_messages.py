"""What the findings say: the fact and the help a user reads, per kind of finding.

Added after mutation testing (docs/testing-quality.md): replacing these messages with None left
every other test green, so nothing checked what a user is told.
"""

from __future__ import annotations

from codemods import table
from codemods.apply.engine import migrate
from codemods.io import catalogue
from codemods.table import Target

TF = "import tensorflow as tf\n"


def _messages(source: str, target: Target = "keras2") -> list[tuple[str, bool, str, str]]:
    return [(f.code, f.fixed, f.message, f.help) for f in migrate(TF + source, target).findings]


def _reported(code: str, what: str, target: Target = "keras2") -> tuple[str, bool, str, str]:
    """A report: what was found (the fact), and the rule's instruction as its help."""
    return (code, False, what, table.RULES_BY_CODE[code].instruction_on(target))


def test_graph_rewrite_is_reported_with_what_stops_the_rewrite():
    # `opt`'s kind is left to run time, but the dispatch has no statement of its own to take.
    source = "ops = [tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)]\n"
    what = (
        "tf.train.experimental.enable_mixed_precision_graph_rewrite: kind known at run time "
        "only, and the call is not the whole value of a statement of its own line"
    )
    assert _messages(source) == [_reported("LSO008", what)]


def test_an_unknown_member_is_reported_as_removed():
    source = "policy = tf.keras.mixed_precision.experimental.get_layer_policy(layer)\n"
    what = "tf.keras.mixed_precision.experimental.get_layer_policy was removed"
    assert _messages(source) == [_reported("LSO012", what)]


def test_a_rename_says_old_and_new():
    source = "tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n"
    assert _messages(source) == [
        (
            "LSO004",
            True,
            "tf.keras.mixed_precision.experimental.set_policy -> mixed_precision.set_global_policy",
            "",
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
        assert _messages(source, target) == [_reported("LSO003", what, target)]


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
        assert [(f.code, f.fixed, f.message, f.help) for f in result.findings] == [
            _reported("LSO001", what)
        ], argument


def test_every_rules_help_is_one_short_line():
    # The `help:` line under a finding (issue 23); the reasoning belongs in `details`.
    for rule in table.RULES:
        for help_line in (rule.instruction, *rule.instructions.values()):
            assert "\n" not in help_line and 20 <= len(help_line) <= 130, (rule.code, help_line)


def test_the_reasoning_is_said_once_by_explain_and_in_the_catalogue():
    page = catalogue.render()
    for rule in table.RULES:
        explained = catalogue.explain(rule.code)
        assert f"help: {rule.instruction}" in explained
        if rule.details:
            assert explained.count(rule.details) == 1, rule.code
            assert page.count(catalogue._markdown(rule.details)) == 1, rule.code


def test_a_quoted_excerpt_that_spans_lines_is_cut_at_its_first_line_end():
    # issue 38: the fact and the help quoted `flags_core.get_loss_scale(` and the call's next
    # line, which spilled onto a third line of output.
    for newline in ("\n", "\r\n"):
        source = (
            "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
            "    opt, loss_scale=flags_core.get_loss_scale(\n"
            "        flags_obj, default_for_fp16=128))\n"
        ).replace("\n", newline)
        quoted = "loss_scale=flags_core.get_loss_scale(... is only known at run time"
        keras3 = [f for f in migrate(TF + source, "keras3").findings if f.code == "LSO001"]
        assert [f.message.endswith(quoted) for f in keras3] == [True]
        [shim] = [f for f in migrate(TF + source, "shim").findings if f.code == "LSO001"]
        assert shim.help == f"the loss scale stays, as {quoted}"
        for target in table.TARGETS:
            for finding in migrate(TF + source, target).findings:
                assert "\n" not in finding.message + finding.help, finding
                assert "\r" not in finding.message + finding.help, finding


def test_cutting_an_excerpt_keeps_the_findings_own_words_after_it():
    from codemods.source import cut_excerpts

    code = "x = f(\n    a,\n    b)\ny = 1\n"
    assert cut_excerpts("f(\n    a,\n    b) is computed", [code]) == "f(... is computed"
    assert cut_excerpts("`f(\n    a,\n    b)`: twice f(\n    a,", [code]) == "`f(...`: twice f(..."
    # A line end that is no code's (never written by a rule): only the break goes.
    assert cut_excerpts("g(\n   z) here", [code]) == "g(...z) here"
    assert cut_excerpts("one line", [code]) == "one line"
