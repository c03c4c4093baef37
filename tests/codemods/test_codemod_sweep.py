"""The final sweep: the shapes a run used to pass over in silence, each migrated or reported at its
own line on every target (issue: "the codemod never leaves a break in silence")."""

from __future__ import annotations

import textwrap

import pytest

from codemods import guarantee, table
from codemods.apply.engine import migrate
from codemods.io import catalogue
from codemods.sweep import findings as sweep_findings
from codemods.table import RULES_BY_CODE, Target
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes

TARGETS: list[Target] = ["keras2", "keras3", "shim"]


def manual(findings) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in findings if not f.fixed]


def assert_guarantee(before: str, target: Target) -> list:
    """Nothing the sweep flags is left unreported; returns the manual findings."""
    text = textwrap.dedent(before)
    assert guarantee.unreported(text, target) == []
    result = migrate(text, target)
    assert migrate(result.text, target).text == result.text, "a second run must change nothing"
    return [f for f in result.findings if not f.fixed]


# -- each silent shape of the issue, by name -------------------------------------------------------

FEATURE_DETECTED_CLASS = """\
    import tensorflow as tf
    if hasattr(tf.keras.mixed_precision, "experimental"):
        wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer
    else:
        wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer
    opt = wrapper_class(opt, loss_scale="dynamic")
    """


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_class_stored_in_a_variable_in_a_feature_detection_branch(target):
    findings = assert_unchanged(FEATURE_DETECTED_CLASS, target)
    assert manual(findings) == [(3, "LSO104"), (6, "LSO102")]
    gated, use = findings
    assert gated.message.endswith(" (branch of `if hasattr(tf.keras.mixed...`, line 2)")
    assert "ignore[LSO104]" in gated.help
    # Where the name is used, the finding says why it cannot be followed and where it was bound.
    assert "(bound more than one way, line 3)" in use.message


def test_on_the_shim_the_new_branch_moves_and_the_gated_one_is_reported():
    result = migrate(textwrap.dedent(FEATURE_DETECTED_CLASS), "shim")
    assert "    wrapper_class = compat_lso.LossScaleOptimizer\n" in result.text
    # The use cannot be moved: it calls one class or the other, so LSO016 reports it.
    assert manual(result.findings) == [(3, "LSO104"), (6, "LSO016")]


MODULE_IN_AN_ATTRIBUTE = """\
    import tensorflow as tf


    class Trainer:
        def __init__(self):
            self._mixed_precision = tf.keras.mixed_precision.experimental

        def setup(self):
            self._mixed_precision.set_policy("mixed_float16")
    """


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_module_stored_in_an_attribute(target):
    # --target shim stores compat_lso.experimental instead (LSO025).
    findings = assert_unchanged(MODULE_IN_AN_ATTRIBUTE, target)
    assert manual(findings) == [(6, "LSO103"), (9, "LSO102")]
    stored, use = findings
    assert "stored in self._mixed_precision" in stored.message
    assert "(line 9)" in stored.help
    assert "(attribute self._mixed_precision set at line 6)" in use.message
    assert "tf.keras.mixed_precision" in use.help


def test_module_stored_in_an_attribute_whose_member_the_shim_lacks_is_reported():
    findings = assert_unchanged(
        MODULE_IN_AN_ATTRIBUTE.replace('set_policy("mixed_float16")', "get_layer_policy(layer)"),
        "shim",
    )
    assert manual(findings) == [(6, "LSO103"), (9, "LSO102")]
    assert "compat_lso.experimental" in findings[0].help


@pytest.mark.parametrize("target", TARGETS)
def test_import_with_a_none_fallback_is_followed_and_migrated(target):
    # `tf = None` in the except clause made every use below unknown, and so skipped.
    new_set_policy = "tf.keras.mixed_precision.set_global_policy"
    findings = assert_rewrites(
        """\
        try:
            import tensorflow as tf
        except ImportError:
            tf = None
        if tf is not None:
            tf.keras.mixed_precision.experimental.set_policy("float32")
        """,
        f"""\
        try:
            import tensorflow as tf
        except ImportError:
            tf = None
        if tf is not None:
            {new_set_policy}("float32")
        """,
        target,
    )
    assert [(f.line, f.code) for f in findings] == [(6, "LSO004")]


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_compat_v2_import_with_compat_v2_spelling_is_migrated(target):
    assert_rewrites(
        """\
        import tensorflow.compat.v2 as tf
        opt = tf.compat.v2.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")
        policy = tf.keras.mixed_precision.experimental.global_policy()
        """,
        """\
        import tensorflow.compat.v2 as tf
        opt = tf.compat.v2.keras.mixed_precision.LossScaleOptimizer(opt)
        policy = tf.keras.mixed_precision.global_policy()
        """,
        target,
    )


def test_compat_v2_spelling_of_the_loss_scale_classes_is_reported_by_the_sweep():
    # No rule knows tf.compat.v2.mixed_precision.experimental: the sweep's safety net says so.
    for target in TARGETS:
        findings = assert_unchanged(
            "import tensorflow as tf\n"
            "scale = tf.compat.v2.mixed_precision.experimental.FixedLossScale(8)\n",
            target,
        )
        assert manual(findings) == [(2, "LSO100")]
        assert "no rule rewrote or reported it" in findings[0].message


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_experimental_import_kept_for_a_manual_use_is_reported_at_its_line(target):
    findings = assert_unchanged(
        """\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        opt = mixed_precision.LossScaleOptimizer(opt, FLAGS.get_loss_scale())
        """,
        target,
    )
    assert manual(findings) == [(1, "LSO101"), (2, "LSO001")]
    assert "import of" in findings[0].message and "line 2" in findings[0].help


RETURNED_AND_PASSED = """\
    import tensorflow as tf


    def get_mixed_precision():
        return tf.keras.mixed_precision.experimental


    def build(mixed_precision, optimizer):
        return mixed_precision.LossScaleOptimizer(optimizer, loss_scale="dynamic")


    opt = build(get_mixed_precision(), opt)
    """


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_module_returned_by_a_function_and_passed_on_as_a_parameter(target):
    findings = assert_unchanged(RETURNED_AND_PASSED, target)
    assert manual(findings) == [(5, "LSO103"), (9, "LSO102")]
    returned, use = findings
    # Not the misleading "no known equivalent" of a member (LSO012) any more.
    assert "no known equivalent" not in returned.message
    assert "returned from get_mixed_precision()" in returned.message
    assert "(line 9)" in returned.help
    assert "(parameter mixed_precision (of build()) given it at line 12)" in use.message


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_module_passed_directly_is_reported_where_it_is_passed_and_used(target):
    findings = assert_unchanged(
        """\
        import tensorflow as tf
        def build(mixed_precision, optimizer):
            mixed_precision.set_policy("mixed_float16")
        build(tf.keras.mixed_precision.experimental, opt)
        """,
        target,
    )
    assert manual(findings) == [(3, "LSO102"), (4, "LSO103")]
    assert "passed to build()" in findings[1].message


PRIVATE_IN_A_VERSION_GATE = """\
    import tensorflow as tf
    from packaging import version

    if version.parse(tf.__version__) < version.parse("2.4"):
        from tensorflow.python.keras.mixed_precision.experimental import loss_scale_optimizer
        LSO = loss_scale_optimizer.LossScaleOptimizer
    else:
        LSO = tf.keras.mixed_precision.LossScaleOptimizer
    """


@pytest.mark.parametrize("target", TARGETS)
def test_private_import_inside_a_version_gate(target):
    # On the shim, the other branch's class moves to compat_lso (LSO016); the gated one stays.
    result = migrate(textwrap.dedent(PRIVATE_IN_A_VERSION_GATE), target)
    assert ("compat_lso.LossScaleOptimizer" in result.text) == (target == "shim")
    # No supported TensorFlow (>= 2.12) runs the `< 2.4` branch: notes, no manual work.
    assert manual(result.findings) == []
    findings = [f for f in result.findings if f.note]
    assert [(f.line, f.code) for f in findings] == [(5, "LSO104"), (6, "LSO104")]
    # The import by its private path; the alias by the public name the class is (LSO014).
    assert "tensorflow.python.keras...." in findings[0].message
    assert "tf.keras.mixed_precision.experimental.LossScaleOptimizer" in findings[1].message
    assert findings[0].message.endswith(" (branch of line 4, dead on TF >= 2.12: kept as written)")
    assert findings[0].help == (
        "only TF < 2.4 runs this branch: delete it once you no longer support TF < 2.4"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_fallback_import_between_the_old_and_the_new_module(target):
    findings = assert_unchanged(
        """\
        try:
            from tensorflow.keras.mixed_precision import experimental as mixed_precision
        except ImportError:
            from tensorflow.keras import mixed_precision
        mixed_precision.set_policy("mixed_float16")
        """,
        target,
    )
    assert manual(findings) == [(2, "LSO104"), (5, "LSO102")]
    assert "(try branch of `try/except ImportError`, line 1)" in findings[0].message
    assert "bound more than one way, line 2" in findings[1].message


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_conditional_alias_without_a_gate(target):
    findings = assert_unchanged(
        """\
        import tensorflow as tf
        if FLAGS.old_api:
            mp = tf.keras.mixed_precision.experimental
        else:
            mp = tf.keras.mixed_precision
        mp.set_policy("mixed_float16")
        """,
        target,
    )
    assert manual(findings) == [(3, "LSO101"), (6, "LSO102")]


@pytest.mark.parametrize("target", TARGETS)
def test_getattr_feature_detection(target):
    findings = assert_unchanged(
        """\
        import tensorflow as tf
        experimental = getattr(tf.keras.mixed_precision, "experimental", None)
        if experimental is not None:
            experimental.set_policy("mixed_float16")
        """,
        target,
    )
    assert manual(findings) == [(2, "LSO104"), (4, "LSO104")]


# -- gates: migrated where a rule can, reported (suppressibly) where it cannot ---------------------


@pytest.mark.parametrize("target", TARGETS)
def test_a_rewritable_use_under_a_version_gate_is_migrated(target):
    text, _ = migrate_text(
        """\
        import tensorflow as tf
        if tf.__version__.startswith("2.3"):
            tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
        """,
        target,
    )
    assert "experimental" not in text


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_a_rule_finding_under_a_gate_says_it_is_an_old_branch(target):
    findings = assert_unchanged(
        """\
        import tensorflow as tf
        try:
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, get_scale())
        except AttributeError:
            opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
        """,
        target,
    )
    assert manual(findings) == [(3, "LSO001")]
    assert "(try branch of `try/except AttributeError`, line 2)" in findings[0].message
    assert "ignore[LSO001]" in catalogue.explain("LSO001")  # what to do there, said once


@pytest.mark.parametrize(
    "comment",
    ["# compat-lso: ignore", "# compat-lso: ignore[LSO104]", "# compat-lso: ignore[LSO001]"],
)
def test_a_gated_line_can_be_suppressed(comment):
    before = FEATURE_DETECTED_CLASS.replace(
        ".experimental.LossScaleOptimizer\n", f".experimental.LossScaleOptimizer  {comment}\n"
    )
    findings = assert_unchanged(before)
    assert manual(findings) == [(6, "LSO102")]


def test_suppressing_another_code_does_not_hide_the_sweep():
    before = FEATURE_DETECTED_CLASS.replace(
        ".experimental.LossScaleOptimizer\n",
        ".experimental.LossScaleOptimizer  # compat-lso: ignore[LSO004]\n",
    )
    assert manual(assert_unchanged(before)) == [(3, "LSO104"), (6, "LSO102")]


# -- what counts as reported -----------------------------------------------------------------------


def test_arguments_of_a_reported_call_on_other_lines_are_covered_by_it():
    findings = assert_guarantee(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            opt,
            tf.mixed_precision.experimental.DynamicLossScale(FLAGS.scale, 100, multiplier=3),
        )
        """,
        "keras2",
    )
    assert manual_codes(findings) == ["LSO001"]


def test_line_numbers_are_the_original_ones_when_an_import_is_inserted_above():
    # --target shim inserts `import compat_lso` at the top; the sweep's finding keeps line 4.
    findings = assert_guarantee(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, get_scale())
        def get():
            return tf.keras.mixed_precision.experimental
        policy = get().get_layer_policy(layer)
        """,
        "shim",
    )
    assert manual(findings)[0] == (4, "LSO103")
    assert findings[0].col == 12


@pytest.mark.parametrize(
    ("skipped", "left"),
    [(None, ["LSO100"]), ("LSO100", []), ("LSO011", []), ("LSO104", ["LSO100"])],
)
def test_rule_selection_is_respected(skipped, left):
    # --skip of the sweep's code, or of the rule the name falls under (LSO011), turns it off.
    enabled = set(RULES_BY_CODE) - {skipped}
    result = migrate("compute = self.optimizer.get_scaled_loss\n", "keras3", enabled)
    assert [f.code for f in result.findings] == left


# -- Keras 3: what the target's Keras does not understand ------------------------------------------


def test_keras3_get_scaled_loss_taken_as_a_value_is_reported():
    # LSO011 reports calls; a bound method taken as a value is caught by the sweep.
    before = "compute = self.optimizer.get_scaled_loss\n"
    assert manual(assert_unchanged(before, "keras3")) == [(1, "LSO100")]
    assert manual(assert_unchanged(before, "keras2")) == []


def test_keras3_reads_keras2_arguments_of_the_new_class_differently():
    before = (
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd, dynamic=False, initial_scale=8)\n"
        "again = tf.keras.mixed_precision.LossScaleOptimizer(sgd, True, 8)\n"
        "fine = tf.keras.mixed_precision.LossScaleOptimizer(sgd, dynamic=True)\n"
    )
    # LSO015 rewrites what it can and reports the fixed scale; the sweep has nothing left.
    findings = migrate(before, "keras3").findings
    assert manual(findings) == [(2, "LSO015")]
    assert manual(assert_unchanged(before, "keras2")) == []
    # Behind the rule, the sweep knows both calls Keras 3 reads differently.
    findings = sweep_findings.flags(before, "keras3")
    assert manual(findings) == [(2, "LSO100"), (3, "LSO100")]
    assert "dynamic=..." in findings[0].message and "3 positional" in findings[1].message


def test_the_old_keyword_on_the_new_class_is_reported_on_every_target():
    before = (
        "from tensorflow.keras import mixed_precision\n"
        "opt = mixed_precision.LossScaleOptimizer(opt, loss_scale='dynamic')\n"
    )
    # On keras2 only the sweep knows it; on keras3 and shim LSO015 reports it first.
    expected: list[tuple[Target, str]] = [
        ("keras2", "LSO100"),
        ("keras3", "LSO015"),
        ("shim", "LSO015"),
    ]
    for target, code in expected:
        findings = assert_unchanged(before, target)
        assert manual(findings) == [(2, code)]
    assert "old experimental signature" in assert_unchanged(before, "keras2")[0].message


# -- the guarantee as a function -------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "before",
    [
        FEATURE_DETECTED_CLASS,
        MODULE_IN_AN_ATTRIBUTE,
        RETURNED_AND_PASSED,
        PRIVATE_IN_A_VERSION_GATE,
    ],
    ids=["feature-detected-class", "attribute", "returned-and-passed", "private-in-a-gate"],
)
def test_unreported_is_empty_for_every_named_shape(before, target):
    assert_guarantee(before, target)


def test_unreported_finds_what_a_run_without_the_sweep_leaves(monkeypatch):
    # The invariant can fail: with the sweep stage switched off, the silent shapes come back.
    monkeypatch.setattr(sweep_findings, "run", lambda *args: [])
    left = guarantee.unreported(textwrap.dedent(RETURNED_AND_PASSED), "keras2")
    assert [(f.line, f.code) for f in left] == [(5, "LSO103"), (9, "LSO102")]


def test_flags_lists_what_breaks_reported_or_not():
    text = "import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.Policy(n, 8)\n"
    found = sweep_findings.flags(text, "keras2")
    assert [(f.line, f.col, f.code) for f in found] == [(2, 7, "LSO100")]
    assert guarantee.unreported(text, "keras2") == []  # LSO006 reports it


def migrate_text(before: str, target: Target) -> tuple[str, list]:
    result = migrate(textwrap.dedent(before), target)
    return result.text, result.findings


def test_check_exits_0_only_when_the_sweep_finds_nothing(tmp_path, capsys):
    from codemods.cli import EXIT_CLEAN, EXIT_FINDINGS, main

    silent = tmp_path / "silent.py"
    silent.write_text(textwrap.dedent(MODULE_IN_AN_ATTRIBUTE))
    assert main(["--check", "--target", "keras2", str(silent)]) == EXIT_FINDINGS
    out = capsys.readouterr().out
    assert "silent.py:6:" in out and "LSO103" in out and "silent.py:9:" in out and "LSO102" in out
    # Fixed by hand, as the messages say: nothing left, exit 0.
    silent.write_text(
        textwrap.dedent(MODULE_IN_AN_ATTRIBUTE)
        .replace("mixed_precision.experimental", "mixed_precision")
        .replace("set_policy", "set_global_policy")
    )
    assert main(["--check", "--target", "keras2", str(silent)]) == EXIT_CLEAN


def test_a_notebook_cell_gets_the_sweep_finding_with_its_cell(tmp_path):
    import json

    from codemods.io.files import migrate_bytes

    cells = [
        {"cell_type": "code", "source": ["import tensorflow as tf\n"], "metadata": {}},
        {
            "cell_type": "code",
            "source": ["def get():\n", "    return tf.keras.mixed_precision.experimental\n"],
            "metadata": {},
        },
    ]
    data = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    outcome = migrate_bytes("nb.ipynb", data.encode(), "keras2", None)
    assert outcome.result is not None
    [finding] = [f for f in outcome.result.findings if not f.fixed]
    assert (finding.line, finding.code) == (2, "LSO103")
    assert finding.message.startswith("[cell 2]")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "binding",
    [
        pytest.param("tf.keras.mixed_precision.experimental.Policy('mixed_float16')", id="policy"),
        pytest.param("tf.keras.mixed_precision.experimental.global_policy()", id="global-policy"),
    ],
)
def test_the_loss_scale_of_a_renamed_policy_is_reported(binding, target):
    # The new Policy has no loss_scale: the rename leaves a read that fails (AttributeError).
    result = migrate(
        f"import tensorflow as tf\npolicy = {binding}\nprint(policy.loss_scale)\n", target
    )
    assert manual(result.findings) == [(3, "LSO100")]
    assert "does not exist on the new Policy" in result.findings[-1].message


def test_the_loss_scale_of_an_optimizer_is_not_mistaken_for_a_policys():
    before = (
        "import tensorflow as tf\n"
        "policy = tf.keras.mixed_precision.Policy('mixed_float16')\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n"
        "print(opt.loss_scale)\n"
    )
    assert manual(assert_unchanged(before, "keras2")) == []


# -- a loss scale optimizer handed on (issue 32): returns, tuples, attributes, containers ---------

HANDED_ON = """\
    import tensorflow as tf
    from trainer import restore
    class Trainer:
        def __init__(self):
            self.model, self.scaler = build()
    def build():
        model = make()
        return model, tf.keras.mixed_precision.LossScaleOptimizer(sgd)
    net, wrapped = build()
    parts = {"scaler": wrapped}
    print(wrapped.loss_scale, parts["scaler"].dynamic_counter, Trainer().scaler.loss_scale)
    _, restored = restore()
    print(restored.loss_scale)
    """


@pytest.mark.parametrize("target", TARGETS)
def test_a_handed_on_loss_scale_optimizer_is_migrated_or_reported(target):
    assert_guarantee(HANDED_ON, target)


def test_the_sweep_alone_flags_every_handed_on_member_read_on_keras3():
    # Behind the rules: typed through a tuple, a dict, an attribute stored from a tuple; and
    # `restored`, which a function of another module returns, in a module that makes one.
    found = sweep_findings.flags(textwrap.dedent(HANDED_ON), "keras3")
    assert [(f.line, f.col) for f in found] == [(11, 7), (11, 27), (11, 60), (13, 7)]
    without_the_constructor = textwrap.dedent(HANDED_ON).replace(
        "tf.keras.mixed_precision.LossScaleOptimizer(sgd)", "tf.keras.optimizers.SGD()"
    )
    assert sweep_findings.flags(without_the_constructor, "keras3") == []


# -- the shim's help names only what compat_lso.experimental has (issue 32, item 5) ----------------

GATED_PRIVATE_AUTOCAST = """\
    import tensorflow as tf
    from packaging import version
    if version.parse(tf.__version__) >= version.parse("2.4"):
        from tensorflow.python.keras.mixed_precision import autocast_variable
    else:
        from tensorflow.python.keras.mixed_precision.experimental import autocast_variable
    variable_types = (tf.Variable, autocast_variable.AutoCastVariable)
    """


def test_on_the_shim_a_private_name_compat_lso_lacks_is_not_pointed_there():
    # The shape of sagemaker-debugger's TF < 2.4 gate: the shim has no AutoCastVariable.
    # The `else` of `>= 2.4` runs on no supported TensorFlow: line 6 is a note (see LSO104's tests).
    findings = assert_guarantee(GATED_PRIVATE_AUTOCAST, "shim")
    assert manual(findings) == [(7, "LSO102")]
    assert "compat_lso.experimental.AutoCastVariable" not in findings[0].help
    assert "import the public name instead" in findings[0].help


def test_the_shims_experimental_names_are_compat_lso_experimentals():
    import ast
    import pathlib

    source = pathlib.Path(__file__).parents[2] / "compat_lso" / "experimental.py"
    (exported,) = [
        node.value
        for node in ast.parse(source.read_text()).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
    ]
    assert set(ast.literal_eval(exported)) == table.SHIM_EXPERIMENTAL_NAMES


@pytest.mark.parametrize("target", TARGETS)
def test_the_help_for_a_removed_member_is_the_targets(target):
    # What the sweep says (LSO100) where no rule rewrote `opt.loss_scale()` or `policy.loss_scale`:
    # Keras 2's and compat_lso's LossScaleOptimizer have `loss_scale` (a tensor), Keras 3's has
    # `dynamic_scale` and `initial_scale`.
    text = textwrap.dedent(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)
        print(opt.loss_scale())
        policy = tf.keras.mixed_precision.Policy("mixed_float16")
        print(policy.loss_scale)
        """
    )
    helps = {f.line: f.help for f in sweep_findings.flags(text, target) if f.code == "LSO100"}
    assert sorted(helps) == [3, 5]
    for help in helps.values():
        assert ("dynamic_scale" in help) == (target == "keras3")
        assert ("opt.loss_scale" in help) == (target != "keras3")
