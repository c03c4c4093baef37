"""LSO014: TensorFlow's private tensorflow.python.keras.mixed_precision.experimental.

Its classes and functions that TF 2.1-2.3 exported (keras_export) as
tf.keras.mixed_precision.experimental.* are those very objects: read through a private module
that can be re-pointed (`... import loss_scale_optimizer as lso`, `... import policy`) or
imported by name, they are migrated as the public names (LSO001/2/4/6), the private import
re-pointed or removed. Anything else from the package is reported with the public name to use.
"""

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes

PRIVATE = "tensorflow.python.keras.mixed_precision.experimental"


# -- rewritten: the public names the private ones are ----------------------------------------------
@pytest.mark.parametrize(
    ("before", "after", "codes"),
    [
        pytest.param(
            f"import tensorflow as tf\nfrom {PRIVATE} import loss_scale_optimizer as lso\n"
            "opt = lso.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')\n",
            "import tensorflow as tf\nfrom tensorflow.keras import mixed_precision as lso\n"
            "opt = lso.LossScaleOptimizer(tf.keras.optimizers.SGD())\n",
            ["LSO001"],
            id="constructor-through-the-private-module",
        ),
        pytest.param(
            f"from {PRIVATE} import loss_scale_optimizer\n"
            "scaled = isinstance(opt, loss_scale_optimizer.LossScaleOptimizer)\n",
            "from tensorflow.keras import mixed_precision\n"
            "scaled = isinstance(opt, mixed_precision.LossScaleOptimizer)\n",
            ["LSO002"],
            id="isinstance-check",
        ),
        pytest.param(
            f"from {PRIVATE}.loss_scale_optimizer import LossScaleOptimizer\n"
            "opt = LossScaleOptimizer(opt, loss_scale=128)\n",
            "from tensorflow.keras.mixed_precision import LossScaleOptimizer\n"
            "opt = LossScaleOptimizer(opt, dynamic=False, initial_scale=128)\n",
            ["LSO001"],
            id="a-name-imported-from-it",
        ),
        pytest.param(
            f"import {PRIVATE}.policy as policy_module\n"
            "policy = policy_module.Policy('mixed_float16')\npolicy_module.set_policy(policy)\n",
            "import tensorflow.keras.mixed_precision as policy_module\n"
            "policy = policy_module.Policy('mixed_float16')\n"
            "policy_module.set_global_policy(policy)\n",
            ["LSO006", "LSO004"],
            id="dotted-import-with-an-alias",
        ),
    ],
)
def test_exported_names_are_migrated_as_the_public_ones(before, after, codes):
    findings = assert_rewrites(before, after, "keras2")
    assert [f.code for f in findings] == codes and all(f.fixed for f in findings)


def test_on_the_shim_the_private_class_becomes_the_shims():
    findings = assert_rewrites(
        f"from {PRIVATE} import loss_scale_optimizer as lso\n"
        "opt = lso.LossScaleOptimizer(opt, 'dynamic')\n"
        "scaled = isinstance(opt, lso.LossScaleOptimizer)\n",
        "import compat_lso\n"
        "opt = compat_lso.LossScaleOptimizer(opt)\n"
        "scaled = isinstance(opt, compat_lso.LossScaleOptimizer)\n",
        "shim",
    )
    assert [(f.code, f.fixed) for f in findings] == [("LSO001", True), ("LSO002", True)]


def test_on_keras3_a_fixed_scale_stays_manual_as_the_public_class_would():
    # Keras 3 has no fixed LossScaleOptimizer (LSO001): the private spelling changes nothing.
    findings = assert_unchanged(
        f"from {PRIVATE}.loss_scale_optimizer import LossScaleOptimizer\n"
        "opt = LossScaleOptimizer(opt, loss_scale=128)\n",
        "keras3",
    )
    assert manual_codes(findings) == ["LSO101", "LSO001"]


def test_another_use_of_the_private_module_keeps_its_import_and_the_rewrite_back():
    # `lso._UnwrapPreventer` has no public name: re-pointing `lso` would break it, so the
    # constructor is not rewritten either (keras2), and both are reported.
    findings = assert_unchanged(
        f"from {PRIVATE} import loss_scale_optimizer as lso\n"
        "opt = lso.LossScaleOptimizer(opt, 'dynamic')\nx = lso._UnwrapPreventer\n"
    )
    assert manual_codes(findings) == ["LSO101", "LSO001", "LSO101"]
    assert "another use" in findings[1].message


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_a_subclass_is_reported_as_the_public_class_would_be(target):
    # LSO003: a subclass of the experimental class has no safe rewrite but the shim's.
    findings = assert_unchanged(
        f"from {PRIVATE}.loss_scale_optimizer import LossScaleOptimizer\n"
        "class Scaled(LossScaleOptimizer):\n    pass\n",
        target,
    )
    assert manual_codes(findings) == ["LSO101", "LSO003"]
    assert (findings[1].line, findings[1].col) == (2, 14)


# -- TF 2.4-2.5's private path: tf.keras itself then, a private copy from TF 2.6 ------------------
TF24 = "tensorflow.python.keras.mixed_precision"


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_tf24_private_names_are_written_as_the_public_ones(target):
    # From TF 2.6 the private copy's class is not tf.keras's: the isinstance check is False for
    # every tf.keras optimizer and its constructor rejects them. The public names are the objects
    # the code meant on TF 2.4-2.5.
    findings = assert_rewrites(
        f"import tensorflow as tf\nfrom {TF24} import loss_scale_optimizer as lso\n"
        f"from {TF24}.loss_scale_optimizer import LossScaleOptimizer\n"
        f"from {TF24} import policy\n"
        "policy.set_global_policy('mixed_float16')\n"
        "opt = LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        "scaled = isinstance(opt, lso.LossScaleOptimizer)\n",
        "import tensorflow as tf\nfrom tensorflow.keras import mixed_precision as lso\n"
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer\n"
        "from tensorflow.keras import mixed_precision\n"
        "mixed_precision.set_global_policy('mixed_float16')\n"
        "opt = LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        "scaled = isinstance(opt, lso.LossScaleOptimizer)\n",
        target,
    )
    assert manual_codes(findings) == []
    fixed = [(f.line, f.code) for f in findings if f.fixed and not f.note]
    assert fixed == [(5, "LSO014"), (6, "LSO014"), (7, "LSO014")]
    assert "-> tf.keras.mixed_precision.LossScaleOptimizer" in findings[-1].message


def test_tf24_private_class_on_the_shim_becomes_the_shims():
    findings = assert_rewrites(
        f"import tensorflow as tf\nfrom {TF24}.loss_scale_optimizer import LossScaleOptimizer\n"
        "opt = LossScaleOptimizer(tf.keras.optimizers.SGD(), initial_scale=64)\n",
        "import compat_lso\nimport tensorflow as tf\n"
        "opt = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(), initial_scale=64)\n",
        "shim",
    )
    assert [(f.code, f.fixed) for f in findings] == [("LSO015", True)]


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_a_tf24_private_module_that_is_none_of_tf_keras_s_names_gets_no_rewrite_to_itself(target):
    # Issue 39, case 2: `experimental` in a docstring let the file past the prefilter, and each
    # use of device_compatibility_check was "rewritten" to itself as [*], in a file left unchanged.
    findings = assert_unchanged(
        '"""Checks the GPUs (experimental)."""\n'
        f"from {TF24} import device_compatibility_check\n"
        f"from {TF24}.device_compatibility_check import log_device_compatibility_check\n"
        "device_compatibility_check.log_device_compatibility_check('mixed_float16')\n"
        "log_device_compatibility_check('mixed_float16')\n",
        target,
    )
    assert findings == []


def test_tf24_private_member_with_no_public_name_is_reported():
    findings = assert_unchanged(
        f"from {TF24} import loss_scale_optimizer as lso\nlso._UnwrapPreventer(opt)\n", "keras3"
    )
    assert manual_codes(findings) == ["LSO101", "LSO014"]
    assert "not tf.keras's since TF 2.6" in findings[1].message


# -- reported: no public name, or no import to re-point --------------------------------------------
@pytest.mark.parametrize(
    ("before", "where", "help"),
    [
        pytest.param(
            "from tensorflow.python.keras.mixed_precision import experimental\n"
            "policy = experimental.policy.Policy('mixed_float16')\n",
            (2, 10),
            "import tf.keras.mixed_precision.experimental.Policy instead, "
            "then run the codemod again",
            id="the-package-itself-imported",
        ),
        pytest.param(
            f"from {PRIVATE} import loss_scale\nscale = loss_scale.get('dynamic')\n",
            (2, 9),
            "no public name: port it by hand (--explain LSO014)",
            id="a-function-with-no-public-name",
        ),
    ],
)
@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_reported_with_the_public_name_to_use(before, where, help, target):
    findings = assert_unchanged(before, target)
    # The import kept for the use fails on import too: the sweep reports it at line 1 (LSO101).
    # The import kept for the use fails on import too: the sweep reports it at line 1 (LSO101).
    assert manual_codes(findings)[0] == "LSO101"
    assert findings[0].line == 1 and "removed in TF 2.4" in findings[0].message
    finding = findings[1]
    assert (finding.line, finding.col) == where
    assert "removed in TF 2.4" in finding.message
    assert finding.help == help
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
