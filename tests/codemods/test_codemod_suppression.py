"""`# compat-lso: ignore[...]`: only real comments count; which lines of a construct they cover."""

import pytest

from codemods.table import Target
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes

TARGETS: list[Target] = ["keras2", "keras3", "shim"]
TF = "import tensorflow as tf\n"
OLD = "tf.keras.mixed_precision.experimental.set_policy"
NEW = "tf.keras.mixed_precision.set_global_policy"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            f"{OLD}('float32'); s = '# compat-lso: ignore'\n",
            f"{NEW}('float32'); s = '# compat-lso: ignore'\n",
            id="in-a-string-on-the-same-line",
        ),
        pytest.param(
            f"{OLD}('float32'); s = f'{{x}} # compat-lso: ignore'\n",
            f"{NEW}('float32'); s = f'{{x}} # compat-lso: ignore'\n",
            id="in-an-f-string",
        ),
        pytest.param(
            f"{OLD}(\n    '# compat-lso: ignore' and 'float32')\n",
            f"{NEW}(\n    '# compat-lso: ignore' and 'float32')\n",
            id="in-a-string-on-the-last-line-of-the-statement",
        ),
        pytest.param(
            f'doc = """\n# compat-lso: ignore\n"""; {OLD}("float32")\n',
            f'doc = """\n# compat-lso: ignore\n"""; {NEW}("float32")\n',
            id="in-a-triple-quoted-string-ending-on-the-line",
        ),
    ],
)
@pytest.mark.parametrize("target", TARGETS)
def test_the_marker_inside_a_string_suppresses_nothing(before, after, target):
    # 'float32': no compile() wrapping to take over; a policy written as an expression may be
    # 'mixed_float16', and the shim target adds compat_lso.install() for it (LSO023).
    expected = TF + after
    if target == "shim" and " and 'float32'" in before:
        expected = "import compat_lso\n" + TF + "\ncompat_lso.install()\n" + after
    findings = assert_rewrites(TF + before, expected, target)
    assert "LSO004" in {f.code for f in findings if f.fixed}


@pytest.mark.parametrize("target", TARGETS)
def test_the_marker_inside_a_string_on_the_last_line_of_a_call_suppresses_nothing(target):
    before = (
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    loss_scale='dynamic', optimizer=opts['# compat-lso: ignore'])\n"
    )
    new = "compat_lso" if target == "shim" else "tf.keras.mixed_precision"
    after = f"opt = {new}.LossScaleOptimizer(\n    inner_optimizer=opts['# compat-lso: ignore'])\n"
    header = "import compat_lso\n" if target == "shim" else TF
    assert_rewrites(TF + before, header + after, target)


MULTILINE_SUPPRESSED = [
    pytest.param(
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(  # compat-lso: ignore\n"
        "    opt,\n    scale,\n)\n",
        id="comment-on-the-first-line",
    ),
    pytest.param(
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    opt,\n    scale,\n)  # compat-lso: ignore[LSO001]\n",
        id="comment-on-the-last-line-with-the-code",
    ),
    pytest.param(
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt,\n"
        "        scale)  # compat-lso: ignore\n",
        id="comment-after-the-closing-parenthesis",
    ),
]


@pytest.mark.parametrize("before", MULTILINE_SUPPRESSED)
@pytest.mark.parametrize("target", TARGETS)
def test_a_multiline_call_is_suppressed_from_its_first_or_last_line(before, target):
    findings = assert_unchanged(TF + before, target)
    assert not manual_codes(findings)


@pytest.mark.parametrize("target", TARGETS)
def test_the_last_line_of_a_statement_covers_what_is_inside_it(target):
    # Where black leaves the comment of a call it splits over several lines.
    before = (
        TF + "model.compile(\n"
        "    optimizer=tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "        opt, get_scale()),\n"
        "    loss='mse',\n"
        ")  # compat-lso: ignore[LSO001]\n"
    )
    assert not manual_codes(assert_unchanged(before, target))


@pytest.mark.parametrize("target", TARGETS)
def test_a_call_ending_inside_a_statement_is_covered_from_its_own_last_line(target):
    before = (
        TF + "model.compile(\n"
        "    optimizer=tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "        opt, get_scale()),  # compat-lso: ignore\n"
        "    loss='mse',\n"
        ")\n"
    )
    assert not manual_codes(assert_unchanged(before, target))


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_a_comment_on_a_middle_line_covers_only_what_starts_or_ends_there(target):
    # The comment is about the argument on its line, not about the call around it.
    before = (
        TF + "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    opt,  # compat-lso: ignore\n    get_scale(),\n)\n"
    )
    findings = assert_unchanged(before, target)
    assert manual_codes(findings) == ["LSO001"]
    assert findings[0].line == 2


def test_a_code_on_the_last_line_suppresses_only_that_code():
    before = (
        TF + "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    opt, 'dynamic')  # compat-lso: ignore[LSO004]\n"
    )
    after = (
        TF + "opt = tf.keras.mixed_precision.LossScaleOptimizer(\n"
        "    opt)  # compat-lso: ignore[LSO004]\n"
    )
    assert_rewrites(before, after, "keras2")


def test_an_unused_multiline_import_suppressed_on_its_last_line_stays():
    before = (
        "from tensorflow.keras.mixed_precision import (\n"
        "    experimental as mixed_precision,\n"
        ")  # compat-lso: ignore\n"
    )
    assert not assert_unchanged(before, "keras2")


def test_an_unused_multiline_import_is_removed_without_the_comment():
    before = (
        "import os\nfrom tensorflow.keras.mixed_precision import (\n"
        "    experimental as mixed_precision,\n)\n"
    )
    assert_rewrites(before, "import os\n", "keras2")
