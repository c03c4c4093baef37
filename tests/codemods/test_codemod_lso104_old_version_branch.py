"""LSO104: uses of the removed API under a version gate or feature detection.

A branch that no supported TensorFlow (2.12 and later) runs, provably from a test of TensorFlow's
version, cannot break: its findings are notes that say so, and when the branch can go. A branch
that may run stays manual work, labelled with the branch it is and its gate."""

from __future__ import annotations

import textwrap

import pytest

from codemods import guarantee
from codemods.table import Target
from tests.codemods.codemod_cases import assert_unchanged, rewrite

TARGETS: list[Target] = ["keras2", "keras3", "shim"]

HEAD = "import tensorflow as tf\nfrom packaging import version\n"

# horovod/tensorflow/__init__.py (tests/codemods/forms/README.md), a TF 2.2 workaround.
HOROVOD = HEAD + (
    "if tf.__version__.startswith('2.2.'):\n"
    "  from tensorflow.python.keras.mixed_precision.experimental import "
    "device_compatibility_check\n"
    "  device_compatibility_check.log_device_compatibility_check = lambda p, s: None\n"
)

# An alias of the removed class: the sweep's own finding (LSO104) at line 4.
ALIASED = HEAD + "if {gate}:\n    LSO = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"


def notes(findings) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in findings if f.note]


def manual(findings) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in findings if not f.fixed]


@pytest.mark.parametrize("target", TARGETS)
def test_a_tf_2_2_workaround_is_a_note_on_every_target(target):
    findings = assert_unchanged(HOROVOD, target)
    assert guarantee.unreported(HOROVOD, target) == []
    assert manual(findings) == []
    assert notes(findings) == [(4, "LSO104"), (5, "LSO014")]
    for finding in findings:
        assert finding.message.endswith(" (branch of line 3, dead on TF >= 2.12: kept as written)")
        assert finding.help == (
            "only TF 2.2 runs this branch: delete it once you no longer support TF 2.2"
        )


@pytest.mark.parametrize(
    ("gate", "runs_on"),
    [
        ("tf.__version__.startswith('1.')", "TF 1"),
        ("tf.version.VERSION.startswith('2.11.')", "TF 2.11"),
        ("version.parse(tf.__version__) < version.parse('2.4')", "TF < 2.4"),
        ("version.parse('2.4') > version.parse(tf.__version__)", "TF < 2.4"),
        ("version.Version(tf.__version__) <= version.Version('2.3.1')", "TF <= 2.3.1"),
        ("version.parse(tf.__version__) == version.parse('2.3')", "TF 2.3"),
        ("not version.parse(tf.__version__) >= version.parse('2.4')", "TF < 2.4"),
        ("version.parse(tf.__version__) < version.parse('2.4') and USE_AMP", "TF < 2.4"),
    ],
)
def test_a_branch_no_supported_tf_runs_is_a_note(gate, runs_on):
    findings = assert_unchanged(ALIASED.format(gate=gate), "keras3")
    assert manual(findings) == []
    (note,) = findings
    assert (note.line, note.code, note.note) == (4, "LSO104", True)
    assert note.message.endswith("(branch of line 3, dead on TF >= 2.12: kept as written)")
    assert note.help == (
        f"only {runs_on} runs this branch: delete it once you no longer support {runs_on}"
    )


def test_loose_version_compared_with_a_string():
    before = ALIASED.replace(
        "from packaging import version", "from distutils.version import LooseVersion"
    ).format(gate="LooseVersion(tf.__version__) < '2.4'")
    findings = assert_unchanged(before, "keras3")
    assert notes(findings) == [(4, "LSO104")]


@pytest.mark.parametrize(
    "gate",
    [
        "version.parse(tf.__version__) >= version.parse('2.13')",  # runs on TF 2.13-2.21
        "version.parse(tf.__version__) < version.parse('2.16')",  # runs on TF 2.12-2.15
        "tf.__version__.startswith('2.1')",  # TF 2.10-2.19 start with it too
        "tf.__version__ < '2.4'",  # compares strings: True on TF 2.12 ('2.12' < '2.4')
        "version.parse(TF_VERSION) < version.parse('2.4')",  # not known to be TF's version
        "hasattr(tf.keras.mixed_precision, 'experimental')",
        "version.parse(tf.__version__) < version.parse('2.4') or USE_AMP",
    ],
)
def test_a_branch_that_may_run_stays_manual(gate):
    findings = assert_unchanged(ALIASED.format(gate=gate), "keras3")
    assert manual(findings) == [(4, "LSO104")]
    (finding,) = findings
    assert " (branch of `if " in finding.message and finding.message.endswith(", line 3)")
    assert "ignore[LSO104]" in finding.help


ELSE = HEAD + (
    "if version.parse(tf.__version__) >= version.parse('{new}'):\n"
    "    LSO = tf.keras.mixed_precision.LossScaleOptimizer\n"
    "else:\n"
    "    LSO = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
)


def test_the_else_of_a_test_true_on_every_supported_tf_is_a_note():
    findings = assert_unchanged(ELSE.format(new="2.4"), "keras3")
    assert manual(findings) == []
    (note,) = [f for f in findings if f.line == 6]
    assert note.note and note.code == "LSO104"
    assert note.message.endswith("(else branch of line 3, dead on TF >= 2.12: kept as written)")
    assert note.help == (
        "only TF < 2.4 runs this branch: delete it once you no longer support TF < 2.4"
    )


def test_a_live_else_branch_is_labelled_as_the_else_branch():
    findings = assert_unchanged(ELSE.format(new="2.13"), "keras3")
    (finding,) = [f for f in findings if f.line == 6]
    assert (finding.code, finding.fixed) == ("LSO104", False)
    assert finding.message.endswith(" (else branch of `if version.parse(tf.__ver...`, line 3)")


def test_an_elif_is_dead_by_its_own_test():
    before = HEAD + (
        "if version.parse(tf.__version__) < version.parse('2.4'):\n"
        "    LSO = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
        "elif version.parse(tf.__version__) < version.parse('2.9'):\n"
        "    LSO = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
        "else:\n"
        "    LSO = tf.keras.mixed_precision.LossScaleOptimizer\n"
    )
    findings = assert_unchanged(before, "keras3")
    assert manual(findings) == []
    assert notes(findings) == [(4, "LSO104"), (6, "LSO104")]
    assert "only TF < 2.9 runs" in findings[1].help


@pytest.mark.parametrize("target", TARGETS)
def test_a_rewritable_use_in_a_dead_branch_is_kept_with_a_note(target):
    # Issue 40: a branch is live or dead; a dead one gets nothing rewritten (a note says why).
    source = """\
        import tensorflow as tf
        if tf.__version__.startswith("2.3."):
            tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
        """
    text, findings = rewrite(source, target)
    assert text == textwrap.dedent(source)
    assert manual(findings) == []
    assert (3, "LSO004") in notes(findings)
    assert all(f.line == 3 and "kept as written" in f.message for f in findings)
    assert guarantee.unreported(textwrap.dedent(text), target) == []


# Issue 39, case 4: a flag the code or its caller sets is no version gate. Its branch runs whenever
# the flag is on, on every TensorFlow, so deleting it "if no TensorFlow you support runs that
# branch" (--explain's advice for a gate) would not fit: it is labelled as the flag's branch.
FLAGGED = {
    "a-parameter": "def build(opt, use_experimental_api=False):\n    if use_experimental_api:\n",
    "a-literal": "USE_EXPERIMENTAL = True\ndef build(opt):\n    if USE_EXPERIMENTAL:\n",
    "a-setting": "use_experimental = FLAGS.use_experimental\ndef build(opt):\n"
    "    if use_experimental:\n",
}
MANUAL_CALL = "        return tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, s())\n"


@pytest.mark.parametrize("flag", sorted(FLAGGED))
def test_a_caller_s_flag_is_a_branch_of_that_flag_not_of_a_gate(flag):
    before = "import tensorflow as tf\n" + FLAGGED[flag] + MANUAL_CALL
    (finding,) = [f for f in rewrite(before, "keras2")[1] if not f.fixed]
    name = FLAGGED[flag].rsplit("if ", 1)[1].rstrip(":\n")
    line = before.count("\n", 0, before.index("    if ")) + 1
    assert finding.code == "LSO001"
    assert finding.message.endswith(f" (branch of flag `{name}`, line {line})")


def test_the_sweep_codes_a_leftover_under_a_flag_as_what_breaks_not_as_an_old_branch():
    flagged = "import tensorflow as tf\nUSE_EXPERIMENTAL = True\nif USE_EXPERIMENTAL:\n"
    alias = "    LSO = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
    (finding,) = assert_unchanged(flagged + alias, "keras3")
    assert (finding.code, finding.line) == ("LSO101", 4)
    gated = flagged.replace("True", "hasattr(tf.keras.mixed_precision, 'experimental')")
    (finding,) = assert_unchanged(gated + alias, "keras3")
    assert (finding.code, finding.line) == ("LSO104", 4)


def test_a_flag_set_by_feature_detection_stays_a_gate():
    before = (
        "import tensorflow as tf\n"
        "HAS_EXPERIMENTAL = hasattr(tf.keras.mixed_precision, 'experimental')\n"
        "if HAS_EXPERIMENTAL:\n" + MANUAL_CALL.replace("        return", "    opt =")
    )
    (finding,) = [f for f in rewrite(before, "keras2")[1] if not f.fixed]
    assert finding.message.endswith(" (branch of `if HAS_EXPERIMENTAL`, line 3)")


def test_explain_advice_fits_a_gate_and_a_flag():
    from codemods.io.catalogue import explain

    text = explain("LSO001")
    assert "if no TensorFlow you support runs that branch, delete it" in text
    assert "(branch of flag `use_experimental_api`, line N)" in text
    assert "runs whenever the flag is on, so migrate it" in text
