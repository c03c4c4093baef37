"""LSO003: other uses of the experimental class (subclassing, passing it around)."""

import pytest

from codemods.rules.keras3_loss_scale_rule import DYNAMIC_RULE_NOTE
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

BEFORE = (
    "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
    "class Scaled(mixed_precision.LossScaleOptimizer):\n    pass\n"
)


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_subclass_is_reported_not_rewritten(target):
    findings = assert_unchanged(BEFORE, target)
    # The import the subclass keeps fails on import: the sweep reports it too (LSO101).
    assert manual_codes(findings) == ["LSO101", "LSO003"]
    assert findings[1].line == 2 and findings[1].col == 14


def test_shim_keeps_the_old_signature_on_compat_lso_experimental():
    assert_rewrites(
        BEFORE,
        "import compat_lso\nclass Scaled(compat_lso.experimental.LossScaleOptimizer):\n    pass\n",
        "shim",
    )


def test_noop_for_the_new_class():
    assert_unchanged(
        "from tensorflow.keras import mixed_precision\n"
        "class S(mixed_precision.LossScaleOptimizer):\n    pass\n"
    )


# Issue 39, case 7: a user class named LossScaleOptimizer, derived from the experimental one,
# shadows the name. Its calls build the user's class with the old constructor, and the LSO022 note
# belongs at them, not at the policy of a file that never calls compile().
SHADOWED = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision

mixed_precision.experimental.set_policy("mixed_float16")


class LossScaleOptimizer(mixed_precision.experimental.LossScaleOptimizer):
    pass


opt = LossScaleOptimizer(optimizer=tf.keras.optimizers.Adam(1e-3), loss_scale="dynamic")
"""


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_a_class_shadowing_the_name_is_followed_to_its_constructions(target):
    text, findings = rewrite(SHADOWED, target)
    assert "LossScaleOptimizer(optimizer=tf.keras.optimizers.Adam(1e-3), loss_scale=" in text
    at_construction = [f for f in findings if f.line == 11]
    assert (at_construction[0].code, at_construction[0].fixed) == ("LSO003", False)
    assert at_construction[0].message == (
        "LossScaleOptimizer(...) builds LossScaleOptimizer (line 7) with the experimental "
        "class's (optimizer, loss_scale)"
    )
    notes = [(f.code, f.line, f.message) for f in findings if f.note]
    if target == "keras3":  # Keras 3's class runs it once ported: its rule, at the construction
        assert notes == [("LSO022", 11, DYNAMIC_RULE_NOTE)]
    else:
        assert notes == []


def test_a_construction_through_its_own_init_is_the_subclass_s_own_signature():
    own = SHADOWED.replace(
        "    pass\n",
        "    def __init__(self, optimizer, loss_scale):\n"
        "        super().__init__(optimizer, loss_scale)\n",
    )
    findings = rewrite(own, "keras3")[1]
    assert [f.line for f in findings if f.code == "LSO003"] == [7]


def test_shim_keeps_the_constructions_of_a_shadowing_class():
    text, findings = rewrite(SHADOWED, "shim")
    assert "class LossScaleOptimizer(compat_lso.experimental.LossScaleOptimizer):" in text
    assert manual_codes(findings) == [] and not [f for f in findings if f.line == 11]


# Issue 39, case 8: what the subclass reads of Keras 2's class, which Keras 3's lacks.
READS = """\
import tensorflow as tf


class Logged(tf.keras.mixed_precision.{base}):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.dynamic = True

    def apply_gradients(self, grads_and_vars, name=None):
        tf.summary.scalar("lr", self._optimizer.learning_rate)
        tf.summary.scalar("scale", self.loss_scale)
        tf.summary.scalar("on", self.dynamic)
        return super().apply_gradients(grads_and_vars, name)
"""


@pytest.mark.parametrize(
    ("base", "code"),
    [("experimental.LossScaleOptimizer", "LSO003"), ("LossScaleOptimizer", "LSO016")],
)
def test_keras3_names_what_a_subclass_reads_that_keras_3_s_class_lacks(base, code):
    findings = rewrite(READS.format(base=base), "keras3")[1]
    (finding,) = [f for f in findings if f.code == code]
    # `dynamic` is its own attribute here; the other two are Keras 2's, and Keras 3's class has
    # neither (AttributeError in the first step once the base is ported).
    assert finding.help == (
        "adapt it to Keras 3's class, which lacks what it reads: _optimizer (Keras 3: "
        "inner_optimizer), loss_scale (Keras 3: dynamic_scale)"
    )
    keras2 = [f.help for f in rewrite(READS.format(base=base), "keras2")[1] if f.code == code]
    assert all("lacks" not in help for help in keras2)  # Keras 2's class has them
