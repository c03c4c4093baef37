"""LSO018: `x.dtype.name` in a module using mixed precision is reported on keras3 and shim."""

import pytest

from codemods import table
from codemods.io.prefilter import may_contain_targets
from tests.codemods.codemod_cases import assert_unchanged, manual_codes

# Mixed precision through a layer's dtype policy: a global policy would also bring compile()'s
# findings (LSO022's note on keras3, compat_lso.install() on shim: LSO023's tests).
POLICY = "import tensorflow as tf\nlayer = tf.keras.layers.Dense(10, dtype='mixed_float16')\n"


@pytest.mark.parametrize("target", ["keras3", "shim"])
@pytest.mark.parametrize(
    ("line", "fix"),
    [
        ("print('Outputs dtype: %s' % outputs.dtype.name)", "tf.as_dtype(outputs.dtype).name"),
        ("name = dense1.kernel.dtype.name", "tf.as_dtype(dense1.kernel.dtype).name"),
        ("assert model(x)[0].dtype.name == 'float16'", "tf.as_dtype(model(x)[0].dtype).name"),
    ],
)
def test_reported_with_the_line_that_works_on_both(target, line, fix):
    findings = assert_unchanged(POLICY + line + "\n", target)
    assert manual_codes(findings) == ["LSO018"]
    (finding,) = findings
    assert finding.line == 3
    owner = fix.removeprefix("tf.as_dtype(").removesuffix(".dtype).name")
    assert finding.col == line.index(owner + ".dtype.name") + 1
    assert finding.message.endswith(".dtype.name fails on Keras 3, where dtype is a string")
    assert finding.help.startswith(f"write {fix}:")


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
