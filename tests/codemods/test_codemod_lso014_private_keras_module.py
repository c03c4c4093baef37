"""LSO014: TensorFlow's private tensorflow.python.keras.mixed_precision.experimental is reported."""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes

PRIVATE = "tensorflow.python.keras.mixed_precision.experimental"


@pytest.mark.parametrize(
    ("before", "where"),
    [
        pytest.param(
            f"from {PRIVATE} import loss_scale_optimizer as lso\n"
            "opt = lso.LossScaleOptimizer(opt, 'dynamic')\n",
            (2, 7),
            id="constructor-through-the-private-module",
        ),
        pytest.param(
            f"from {PRIVATE} import loss_scale_optimizer\n"
            "scaled = isinstance(opt, loss_scale_optimizer.LossScaleOptimizer)\n",
            (2, 26),
            id="isinstance-check",
        ),
        pytest.param(
            f"from {PRIVATE}.loss_scale_optimizer import LossScaleOptimizer\n"
            "class Scaled(LossScaleOptimizer):\n    pass\n",
            (2, 14),
            id="subclass-of-a-name-imported-from-it",
        ),
        pytest.param(
            "from tensorflow.python.keras.mixed_precision import experimental\n"
            "policy = experimental.policy.Policy('mixed_float16')\n",
            (2, 10),
            id="the-package-itself-imported",
        ),
        pytest.param(
            f"import {PRIVATE}.policy as policy_module\n"
            "policy = policy_module.Policy('mixed_float16')\n",
            (2, 10),
            id="dotted-import-with-an-alias",
        ),
    ],
)
@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_reported_with_the_public_name_to_use(before, where, target):
    findings = assert_unchanged(before, target)
    # The import kept for the use fails on import too: the sweep reports it at line 1 (LSO101).
    assert manual_codes(findings) == ["LSO101", "LSO014"]
    assert findings[0].line == 1 and "removed in TF 2.4" in findings[0].message
    finding = findings[1]
    assert (finding.line, finding.col) == where
    assert "removed in TF 2.4" in finding.message
    assert "removed in TF 2.4" in finding.message
    assert finding.help.startswith("import tf.keras.mixed_precision.experimental.")
    # Shown as written in code: tensorflow.python is not reachable as tf.python.
    assert "tensorflow.python.keras" in finding.message
    assert "tf.python" not in finding.message


def test_an_unused_import_of_it_is_removed():
    # It raises ImportError on TF 2.4 and later; nothing reads it, so removing it is safe.
    findings = assert_rewrites(
        f"import tensorflow as tf\nfrom {PRIVATE} import policy\nx = tf.constant(1)\n",
        "import tensorflow as tf\nx = tf.constant(1)\n",
    )
    assert [(f.code, f.fixed) for f in findings] == [("LSO014", True)]


def test_suppressed_use_is_left_alone():
    findings = assert_unchanged(
        f"from {PRIVATE} import loss_scale_optimizer as lso\n"
        "opt = lso.LossScaleOptimizer(opt, 'dynamic')  # compat-lso: ignore[LSO014]\n"
    )
    # The use is the user's to keep; the import it keeps still fails on import, at its own line.
    assert manual_codes(findings) == ["LSO101"]
    assert findings[0].line == 1 and "line 2" in findings[0].help


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            "from tensorflow.python.keras.mixed_precision import loss_scale_optimizer\n"
            "scaled = isinstance(opt, loss_scale_optimizer.LossScaleOptimizer)\n",
            id="tf-2.4-private-path-still-exists",
        ),
        pytest.param(
            "from tensorflow.python.training.experimental import loss_scale\n"
            "scale = loss_scale.FixedLossScale(128)\n",
            id="private-loss-scale-module-still-exists",
        ),
        pytest.param(
            "experimental = load()\nopt = experimental.loss_scale_optimizer.LossScaleOptimizer()\n",
            id="a-local-name-called-experimental",
        ),
    ],
)
def test_noop(before):
    assert not assert_unchanged(before)
