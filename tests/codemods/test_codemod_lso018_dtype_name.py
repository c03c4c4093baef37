"""LSO018: `x.dtype.name` in a module using mixed precision, rewritten on keras3 and shim."""

import pytest

from codemods import table
from codemods.io.prefilter import may_contain_targets
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes

# Mixed precision through a layer's dtype policy: a global policy would also bring compile()'s
# findings (LSO022's note on keras3, compat_lso.install() on shim: LSO023's tests).
POLICY = "import tensorflow as tf\nlayer = tf.keras.layers.Dense(10, dtype='mixed_float16')\n"


@pytest.mark.parametrize("target", ["keras3", "shim"])
@pytest.mark.parametrize(
    ("line", "after"),
    [
        (
            "print('Outputs dtype: %s' % outputs.dtype.name)",
            "print('Outputs dtype: %s' % getattr(outputs.dtype, \"name\", outputs.dtype))",
        ),
        (
            "name = dense1.kernel.dtype.name",
            'name = getattr(dense1.kernel.dtype, "name", dense1.kernel.dtype)',
        ),
    ],
)
def test_rewritten_to_the_name_on_every_generation(target, line, after):
    findings = assert_rewrites(POLICY + line + "\n", POLICY + after + "\n", target)
    (finding,) = findings
    assert (finding.code, finding.line, finding.fixed, finding.note) == ("LSO018", 3, True, False)


@pytest.mark.parametrize("target", ["keras3", "shim"])
@pytest.mark.parametrize(
    ("line", "owner"),
    [
        ("assert model(x)[0].dtype.name == 'float16'", "model(x)[0]"),
        ("print(layers[0].dtype.name)", "layers[0]"),
    ],
)
def test_a_call_or_subscript_would_run_twice_so_it_is_reported(target, line, owner):
    findings = assert_unchanged(POLICY + line + "\n", target)
    assert manual_codes(findings) == ["LSO018"]
    (finding,) = findings
    assert finding.line == 3
    assert finding.col == line.index(owner + ".dtype.name") + 1
    assert f"`{owner}` would run twice" in finding.message
    assert finding.help.startswith(f"write tf.as_dtype({owner}.dtype).name:")


def test_nothing_to_do_on_keras2():
    assert assert_unchanged(POLICY + "print(outputs.dtype.name)\n", "keras2") == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("import numpy as np\nprint(np.ones(3).dtype.name)\n", id="no-mixed-precision"),
        pytest.param(POLICY + "print(tf.as_dtype(outputs.dtype).name)\n", id="already-fixed"),
        pytest.param(POLICY + "print(outputs.dtype)\n", id="no-name"),
        pytest.param(POLICY + "layer.dtype.name = 'x'\n", id="a-store"),
        pytest.param(
            POLICY + "print(outputs.dtype.name)  # compat-lso: ignore[LSO018]\n", id="suppressed"
        ),
    ],
)
@pytest.mark.parametrize("target", ["keras3", "shim"])
def test_not_reported(text, target):
    assert manual_codes(assert_unchanged(text, target)) == []


def test_the_prefilter_lets_in_a_file_that_has_nothing_else_to_migrate():
    # The TF 2.4 guide's API is fine on Keras 3: only `.dtype.name` breaks there.
    text = POLICY + "print(outputs.dtype.name)\n"
    assert not may_contain_targets(POLICY.encode(), "keras3")
    for target in sorted(table.DTYPE_NAME_TARGETS):
        assert may_contain_targets(text.encode(), target)
    assert not may_contain_targets(b"print(np.ones(3).dtype.name)\n", "keras3")
