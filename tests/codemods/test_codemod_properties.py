"""Properties over generated modules: the output parses, one run is enough, and files with nothing
to migrate come back byte-identical (statements drawn from the real-world patterns the rules cover)."""

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from codemods.engine import migrate

IMPORTS = [
    "import tensorflow as tf",
    "from tensorflow import keras",
    "from tensorflow.keras import mixed_precision",
    "from tensorflow.keras.mixed_precision import experimental as mp",
    "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer",
    "from tensorflow.mixed_precision.experimental import DynamicLossScale, FixedLossScale",
    "import os  # unrelated",
]
STATEMENTS = [
    "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')",
    "opt = mp.LossScaleOptimizer(opt, loss_scale=128)",
    "opt = LossScaleOptimizer(optimizer=opt, loss_scale=DynamicLossScale(initial_loss_scale=2 ** 10))",
    "opt = mp.LossScaleOptimizer(opt, FixedLossScale(32))",
    "opt = keras.mixed_precision.experimental.LossScaleOptimizer(opt, scale)",
    "mp.set_policy('mixed_float16')",
    "p = mixed_precision.experimental.global_policy()",
    "ok = isinstance(opt, (mp.LossScaleOptimizer, tf.keras.optimizers.Optimizer))",
    "print(opt.loss_scale())",
    "scaled = opt.get_scaled_loss(loss)",
    "x = 'tf.keras.mixed_precision.experimental.LossScaleOptimizer'  # a string",
    "def f(tf):\n    return tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf, 1)",
    "if flag:\n    opt = mp.LossScaleOptimizer(opt, 'dynamic')\nelse:\n    pass",
    "class LossScaleOptimizer2(mp.LossScaleOptimizer):\n    pass",
    "total = sum(range(10))",
]
UNRELATED = ["import os  # unrelated", "total = sum(range(10))", "x = 'mixed_precision experimental'"]

modules = st.tuples(st.lists(st.sampled_from(IMPORTS), max_size=4), st.lists(st.sampled_from(STATEMENTS), max_size=6))


@settings(max_examples=150, deadline=None)
@given(module=modules, target=st.sampled_from(["keras2", "keras3", "shim"]), crlf=st.booleans())
def test_output_parses_and_is_stable(module, target, crlf):
    imports, statements = module
    text = "\n".join(imports + statements) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    result = migrate(text, target)
    ast.parse(result.text)
    assert migrate(result.text, target).text == result.text
    if crlf:
        assert "\n" not in result.text.replace("\r\n", "")


@settings(max_examples=50, deadline=None)
@given(lines=st.lists(st.sampled_from(UNRELATED), max_size=6), target=st.sampled_from(["keras2", "keras3", "shim"]))
def test_nothing_to_migrate_is_byte_identical(lines, target):
    text = "\n".join(lines)
    assert migrate(text, target).text == text
