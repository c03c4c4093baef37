"""The registry's dispatch (codemods/rules/__init__.py) spares resolving references that cannot be
old names; these tests hold it to table.classify, resolved by brute force, so that it never hides
one from the reference rules."""

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codemods import rules, table
from codemods.meaning.names import Analysis
from codemods.table import private

HERE = Path(__file__).parent
# Modules bound to old names in the ways users bind them, and one name bound in two ways.
CRAFTED = """\
import tensorflow as tf
import tensorflow.compat.v2 as tf2
from tensorflow.keras.mixed_precision import experimental as mpx
from tensorflow.python.keras.mixed_precision import policy
from tensorflow.python.keras import mixed_precision as private_mp
from tensorflow.python.training.experimental import loss_scale as ls
import compat_lso.experimental as shim_x
mp = tf.keras.mixed_precision
x = tf.train.experimental
y = mp.experimental
mpx.get_layer_policy(layer), mpx.LossScaleOptimizer(opt), x.DynamicLossScale
y.Policy("mixed_float16", loss_scale=1), x.enable_mixed_precision_graph_rewrite(opt)
shim_x.LossScaleOptimizer(opt, "dynamic"), mp.LossScaleOptimizer(opt)
isinstance(opt, mp.LossScaleOptimizer), opt.loss_scale(), policy.Policy("mixed_float16")
policy.Policy, policy.anything, private_mp.experimental.anything, ls.anything, ls.get
tf2.compat.v2.keras.mixed_precision.experimental.Policy, shim_x.LossScaleOptimizer
tf.float32, tf.keras.layers.Dense, mp.Policy
def f(tf):
    return tf.keras.mixed_precision.experimental.Policy
"""


def _modules() -> list[str]:
    paths = sorted((HERE / "forms").glob("*.py")) + sorted((HERE / "fixtures").glob("*.py"))
    return [CRAFTED] + [path.read_text(encoding="utf-8") for path in paths]


@pytest.mark.parametrize("index", range(len(_modules())))
def test_every_reference_that_classifies_passes_the_syntactic_test(index):
    tree = ast.parse(_modules()[index])
    names = Analysis(tree)
    roots = names.bound_to(rules._old_module)
    references: list[ast.Attribute | ast.Name] = [*names.attributes, *names.loads]
    old = [n for n in references if table.classify(names.qualified(n) or "") is not None]
    assert old or index != 0
    assert [n for n in old if not rules._may_name_old_api(n, roots)] == []
    if index == 0:  # the test spares something: `tf.float32` is not resolved
        spared = [n for n in references if not rules._may_name_old_api(n, roots)]
        assert any(ast.unparse(n) == "tf.float32" for n in spared)


def _classified_names() -> list[str]:
    """Names table.classify accepts, one per way it accepts them."""
    found = [
        f"{module}.{member}" for module in table.KERAS_EXPERIMENTAL for member in ("X", "Policy")
    ]
    found += [f"{module}.{m}" for module in table.TF_EXPERIMENTAL for m in table.TF_MEMBERS]
    found += [f"{p}{tail}" for p in private.PRIVATE_PACKAGES for tail in ("", ".x", ".x.y")]
    found += [f"{private.PRIVATE_TRAINING_LOSS_SCALE}.{m}" for m in ("x", "update")]
    found += ["tensorflow.mixed_precision.experimental.x", table.SHIM_EXPERIMENTAL_LSO]
    return found


@pytest.mark.parametrize("qualified", _classified_names())
def test_every_old_name_has_an_old_module_word_before_its_last_part(qualified):
    assert table.classify(qualified) is not None
    assert rules._old_module(qualified.rpartition(".")[0])


PARTS = sorted({part for name in _classified_names() for part in name.split(".")} | {"v1", "x"})


@given(st.lists(st.sampled_from(PARTS), min_size=1, max_size=8))
def test_no_name_classifies_without_an_old_module_word(parts):
    qualified = ".".join(parts)
    if table.classify(qualified) is not None:
        assert rules._old_module(qualified.rpartition(".")[0])


CALLEE_RULES = [module for module in rules.RULE_MODULES if hasattr(module, "callee")]
CALLEES = sorted(
    {*table.OLD_LSO, *table.TF24_LSO, table.SHIM_EXPERIMENTAL_LSO, *_classified_names()}
    | {f"{m}.{member}" for m in table.KERAS_EXPERIMENTAL for member in table.KERAS_MEMBERS}
    | {f"{m}.enable_mixed_precision_graph_rewrite" for m in table.TF_EXPERIMENTAL}
    | {"tensorflow.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite"}
)


@pytest.mark.parametrize("module", CALLEE_RULES, ids=lambda m: m.__name__.rpartition(".")[2])
def test_a_call_rule_takes_only_callees_whose_last_part_it_declares(module):
    taken = [q for q in CALLEES if module.callee(q)]
    assert taken, "the pool holds a callee the rule takes"
    assert {q.rpartition(".")[2] for q in taken} <= module.CALLEE_ENDS


@given(st.lists(st.sampled_from(sorted({p for q in CALLEES for p in q.split(".")})), min_size=2))
def test_no_callee_is_taken_outside_its_declared_last_parts(parts):
    qualified = ".".join(parts)
    for module in CALLEE_RULES:
        if module.callee(qualified):
            assert parts[-1] in module.CALLEE_ENDS, module.__name__


@pytest.mark.parametrize("index", range(len(_modules())))
def test_every_call_a_rule_looks_at_passes_the_attribute_test(index):
    names = Analysis(ast.parse(_modules()[index]))
    looked_at = [
        call
        for call in names.calls
        if rules._call_rules(names.qualified(call.func), rules._spelled(call.func))
    ]
    assert looked_at or index != 0
    for call in looked_at:
        func = call.func
        assert not isinstance(func, ast.Attribute) or func.attr in rules._CALLED_ATTRIBUTES
