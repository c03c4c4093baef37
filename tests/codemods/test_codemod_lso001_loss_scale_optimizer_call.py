"""LSO001: experimental.LossScaleOptimizer(optimizer, loss_scale) -> the new class."""

import pytest

from codemods import table
from codemods.table import Target
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

REWRITES_KERAS2 = [
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
        id="dynamic-positional-drops-the-argument",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "
        "loss_scale='dynamic')\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
        id="dynamic-keyword",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(loss_scale='dynamic', "
        "optimizer=opt)\n",
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(inner_optimizer=opt)\n",
        id="keywords-in-reverse-order-optimizer-becomes-inner_optimizer",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 123)\n",
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False, "
        "initial_scale=123)\n",
        id="number-is-a-fixed-scale",
    ),
    pytest.param(
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        "    opt,  # the inner one\n    loss_scale=2**7,\n)\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(\n"
        "    opt,  # the inner one\n    dynamic=False, initial_scale=2**7,\n)\n",
        id="multiline-call-keeps-its-layout-and-comments",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "
        "tf.mixed_precision.experimental.FixedLossScale(64))\n",
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False, initial_scale=64)\n",
        id="fixed-loss-scale-object",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "scale = tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=2048, "
        "increment_period=500)\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "
        "loss_scale=scale)\n",
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), "
        "initial_scale=2048, dynamic_growth_steps=500)\n",
        id="dynamic-loss-scale-bound-once-is-followed-and-removed",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "
        "tf.train.experimental.DynamicLossScale(2**15, 1000, 2.0))\n",
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic_growth_steps=1000)\n",
        id="dynamic-loss-scale-positional-defaults-omitted",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "
        "tf.compat.v1.mixed_precision.DynamicLossScale())\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
        id="compat-v1-dynamic-loss-scale-all-defaults",
    ),
    pytest.param(
        "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
        "opt = mixed_precision.LossScaleOptimizer(opt, 'dynamic')\n",
        "from tensorflow.keras import mixed_precision\n"
        "opt = mixed_precision.LossScaleOptimizer(opt)\n",
        id="module-alias-from-import-is-re-pointed-keeping-the-alias",
    ),
    pytest.param(
        "from tensorflow.keras.mixed_precision import experimental as mp\n"
        "opt = mp.LossScaleOptimizer(opt, 'dynamic')\n",
        "from tensorflow.keras import mixed_precision as mp\nopt = mp.LossScaleOptimizer(opt)\n",
        id="short-alias-kept",
    ),
    pytest.param(
        "from tensorflow.keras import mixed_precision as mp\n"
        "opt = mp.experimental.LossScaleOptimizer(opt, 8)\n",
        "from tensorflow.keras import mixed_precision as mp\n"
        "opt = mp.LossScaleOptimizer(opt, dynamic=False, initial_scale=8)\n",
        id="alias-of-the-parent-module",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.compat.v1.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "
        "'dynamic')\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
        id="compat-v1-alias-from-the-tf-2.4-page",
    ),
    pytest.param(
        "from tensorflow import keras\n"
        "opt = keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        "from tensorflow import keras\nopt = keras.mixed_precision.LossScaleOptimizer(opt)\n",
        id="from-tensorflow-import-keras",
    ),
    pytest.param(
        "import keras\n"
        "opt = keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        "import keras\nopt = keras.mixed_precision.LossScaleOptimizer(opt)\n",
        id="standalone-keras",
    ),
    pytest.param(
        "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer\n"
        "opt = LossScaleOptimizer(opt, 'dynamic')\n",
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer\n"
        "opt = LossScaleOptimizer(opt)\n",
        id="class-imported-by-name",
    ),
    pytest.param(
        "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer as LSO\n"
        "opt = LSO(opt, 'dynamic')\n",
        "from tensorflow.keras.mixed_precision import LossScaleOptimizer as LSO\nopt = LSO(opt)\n",
        id="class-imported-under-an-alias",
    ),
    pytest.param(
        "import tensorflow as tf\nmp = tf.keras.mixed_precision.experimental\n"
        "opt = mp.LossScaleOptimizer(opt, 'dynamic')\n",
        "import tensorflow as tf\nmp = tf.keras.mixed_precision\n"
        "opt = mp.LossScaleOptimizer(opt)\n",
        id="module-bound-to-a-variable",
    ),
    pytest.param(
        "def build(opt):\n"
        "    from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
        "    return mixed_precision.LossScaleOptimizer(opt, 'dynamic')\n",
        "def build(opt):\n    from tensorflow.keras import mixed_precision\n"
        "    return mixed_precision.LossScaleOptimizer(opt)\n",
        id="import-inside-a-function",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')  # "
        "compat-lso: ignore[LSO004]\n",
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)  # compat-lso: ignore[LSO004]\n",
        id="suppression-of-another-code-does-not-apply",
    ),
]


@pytest.mark.parametrize(("before", "after"), REWRITES_KERAS2)
def test_rewrites_keras2(before, after):
    findings = assert_rewrites(before, after, "keras2")
    assert [f.code for f in findings] and not manual_codes(findings)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "import tensorflow as tf\n"
            "opt = "
            "tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "
            "'dynamic')\n",
            "import compat_lso\nimport tensorflow as tf\n"
            "opt = compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD())\n",
            id="shim-adds-its-import",
        ),
        pytest.param(
            '"""Docstring."""\nimport os\nimport tensorflow as tf\n'
            "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 1)\n",
            '"""Docstring."""\nimport os\nimport compat_lso\n'
            "opt = compat_lso.LossScaleOptimizer(opt, dynamic=False, initial_scale=1)\n",
            id="shim-removes-an-import-left-unused",
        ),
        pytest.param(
            "import tensorflow as tf\n"
            "opt = "
            "tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "
            "scale)\n",
            "import compat_lso\nimport tensorflow as tf\n"
            "opt = compat_lso.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), scale)\n",
            id="shim-keeps-a-runtime-loss-scale-on-the-experimental-class",
        ),
        pytest.param(
            "import compat_lso\nfrom tensorflow.keras.mixed_precision import experimental as mp\n"
            "opt = mp.LossScaleOptimizer(opt, loss_scale=4)\n",
            "import compat_lso\n"
            "opt = compat_lso.LossScaleOptimizer(opt, dynamic=False, initial_scale=4)\n",
            id="shim-reuses-an-existing-import-and-drops-the-unused-alias",
        ),
    ],
)
def test_rewrites_shim(before, after):
    assert_rewrites(before, after, "shim")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "import tensorflow as tf\n"
            "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
            "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
            id="keras3-dynamic",
        ),
        pytest.param(
            "import tensorflow as tf\n"
            "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "
            "tf.mixed_precision.experimental.DynamicLossScale(1024, 100))\n",
            "import tensorflow as tf\n"
            "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt, initial_scale=1024, "
            "dynamic_growth_steps=100)\n",
            id="keras3-dynamic-loss-scale",
        ),
    ],
)
def test_rewrites_keras3(before, after):
    assert_rewrites(before, after, "keras3")


MANUAL = [
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, scale)\n",
        "keras3",
        id="runtime-variable",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, get_scale())\n",
        "keras2",
        id="runtime-call",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "
        "tf.mixed_precision.experimental.DynamicLossScale(multiplier=4))\n",
        "keras2",
        id="multiplier-other-than-2",
    ),
    pytest.param(
        # Issue 39 item 6: 1.5 grows and shrinks the scale by half as much again; the new class
        # doubles and halves. Nothing else tested a multiplier below 2.
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "
        "tf.mixed_precision.experimental.DynamicLossScale(1024, multiplier=1.5))\n",
        "keras2",
        id="multiplier-below-2",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(*args)\n",
        "keras2",
        id="star-args",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 128)\n",
        "keras3",
        id="keras3-has-no-fixed-scale",
    ),
    pytest.param(
        "import tensorflow as tf\nscale = tf.mixed_precision.experimental.DynamicLossScale(4)\n"
        "print(scale)\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, scale)\n",
        "keras2",
        id="loss-scale-name-used-twice-is-not-followed",
    ),
]


@pytest.mark.parametrize(("before", "target"), MANUAL)
def test_reported_with_location_and_instruction(before, target):
    from tests.codemods.codemod_cases import rewrite

    text, findings = rewrite(before, target)
    manual = [f for f in findings if f.code == "LSO001" and not f.fixed]
    assert len(manual) == 1
    assert "LossScaleOptimizer(" in text and "experimental.LossScaleOptimizer" in text
    assert manual[0].line == before.count("\n", 0, before.index("LossScaleOptimizer(")) + 1
    assert "not rewritten: " in manual[0].message
    assert manual[0].help == table.RULES_BY_CODE["LSO001"].instruction_on(target)


RUN_TIME = (
    "import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer("
)


@pytest.mark.parametrize("value", ["scale", "FLAGS.loss_scale", "self.params.scale"])
def test_keras2_converts_a_run_time_loss_scale_where_the_code_runs(value):
    findings = assert_rewrites(
        RUN_TIME + f"opt, loss_scale={value})\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer("
        f'opt, dynamic={value} == "dynamic", initial_scale=None if {value} == "dynamic" else '
        f"{value})\n",
        "keras2",
    )
    (fix,) = findings
    assert fix.message.endswith(f"(..., dynamic=..., initial_scale=...) from {value}")
    assert fix.help.startswith("nothing to change if the loss scale is 'dynamic' or a number")


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(RUN_TIME + "opt, get_scale())\n", id="a-call-read-twice-would-run-twice"),
        pytest.param(
            "import tensorflow as tf\n"
            "scale = tf.mixed_precision.experimental.DynamicLossScale() if fp16 else 128\n"
            + RUN_TIME.removeprefix("import tensorflow as tf\n")
            + "opt, scale)\n",
            id="a-module-that-builds-loss-scale-objects",
        ),
    ],
)
def test_keras2_reports_a_run_time_loss_scale_it_cannot_convert(before):
    text, findings = rewrite(before, "keras2")
    assert "experimental.LossScaleOptimizer(opt, " in text
    assert manual_codes(findings) == ["LSO001"]


@pytest.mark.parametrize(
    ("before", "why"),
    [
        pytest.param(
            RUN_TIME + "opt, FLAGS.loss_scale)\n", "; `opt` not built here", id="not-built-here"
        ),
        pytest.param(
            "import tensorflow as tf\ndef make(scale):\n    return "
            "tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "
            "scale)\n",
            "; the optimizer is passed on, returned or stored where it is built",
            id="handed-on",
        ),
        pytest.param(
            RUN_TIME + "tf.keras.optimizers.SGD(), FLAGS.loss_scale)\n"
            "model.compile(optimizer=opt)\n"
            "ok = isinstance(model.optimizer, tf.keras.mixed_precision.LossScaleOptimizer)\n",
            "; line 4 checks isinstance()",
            id="checked-as-a-loss-scale-optimizer",
        ),
        pytest.param(RUN_TIME + "tf.keras.optimizers.SGD(), get_scale())\n", "", id="a-call"),
    ],
)
def test_keras3_reports_a_run_time_loss_scale_a_number_of_which_has_no_spelling_there(before, why):
    findings = assert_unchanged(before, "keras3")
    assert manual_codes(findings) == ["LSO001"]
    (finding,) = [f for f in findings if not f.fixed]
    assert finding.message.endswith(" is only known at run time" + why)


# A run-time conversion is [*] only where no value the module shows can be a LossScale object,
# which it cannot convert (issue 39, case 1: a subclass imported from another module was rewritten
# to `initial_scale=<the object>`, TypeError on TF 2.15).
OBJECT_REACHES = [
    pytest.param(
        "from scales import RevisedDynamicLossScale\nx = RevisedDynamicLossScale()\n"
        "opt = mp.LossScaleOptimizer(opt, loss_scale=x)\n",
        "x",
        "RevisedDynamicLossScale() at line 3",
        id="another-module-s-class",
    ),
    pytest.param(
        "def build(inner, scale):\n    return mp.LossScaleOptimizer(inner, scale)\n"
        "opt = build(opt, scales.Revised(2**15))\n",
        "scale",
        "scales.Revised() at line 4",
        id="a-parameter-the-module-passes-an-object",
    ),
    pytest.param(
        "scale, steps = read_config()\nopt = mp.LossScaleOptimizer(opt, scale)\n",
        "scale",
        "unpacked from read_config() at line 2",
        id="unpacked-from-a-call",
    ),
    pytest.param(
        "class Trainer:\n    def __init__(self):\n        self.scale = make_scale()\n"
        "    def opt(self, inner):\n        return mp.LossScaleOptimizer(inner, self.scale)\n",
        "self.scale",
        "make_scale() at line 4",
        id="an-attribute-stored-from-a-call",
    ),
]


@pytest.mark.parametrize(("body", "value", "where"), OBJECT_REACHES)
@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_a_run_time_loss_scale_that_may_be_a_loss_scale_object_is_reported(
    body, value, where, target
):
    before = "from tensorflow.keras.mixed_precision import experimental as mp\n" + body
    text, findings = rewrite(before, target)
    assert "mp.LossScaleOptimizer(" in text, "the call is left as written"
    (finding,) = [f for f in findings if f.code == "LSO001"]
    assert not finding.fixed
    assert finding.message.endswith(f"not rewritten: loss_scale may be a LossScale object: {where}")
    assert value  # the value the module shows reaching it is at `where`


def test_shim_keeps_a_loss_scale_that_may_be_an_object_on_the_experimental_class():
    before = (
        "import tensorflow as tf\nfrom scales import RevisedDynamicLossScale\n"
        "x = RevisedDynamicLossScale()\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale=x)\n"
    )
    text, findings = rewrite(before, "shim")
    assert "compat_lso.experimental.LossScaleOptimizer(opt, loss_scale=x)" in text
    assert [(f.code, f.fixed) for f in findings] == [("LSO001", True)]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            "def build(inner, scale='dynamic'):\n    return mp.LossScaleOptimizer(inner, scale)\n"
            "a = build(opt, 128)\nb = build(opt, float(FLAGS.scale))\n",
            id="a-parameter-given-numbers-and-its-default",
        ),
        pytest.param(
            "def pick():\n    return 'dynamic' if FLAGS.dynamic else 2**10\n"
            "scale = pick()\nopt = mp.LossScaleOptimizer(opt, scale)\n",
            id="a-function-of-the-module-returning-literals",
        ),
    ],
)
def test_a_run_time_loss_scale_the_module_shows_to_be_plain_is_converted(body):
    before = "from tensorflow.keras.mixed_precision import experimental as mp\n" + body
    text, findings = rewrite(before, "keras2")
    assert '== "dynamic"' in text and "experimental" not in text
    assert [(f.code, f.fixed) for f in findings] == [("LSO001", True)]


KERAS3_RUN_TIME = """\
import tensorflow as tf
opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.keras.optimizers.Adam(1e-3), {value})
model.compile(optimizer=opt, loss="mse")
"""


@pytest.mark.parametrize("value", ["FLAGS.loss_scale", "self.params.loss_scale", "scale"])
def test_keras3_chooses_a_dynamic_optimizer_or_a_fixed_factor_where_the_code_runs(value):
    findings = assert_rewrites(
        KERAS3_RUN_TIME.format(value=value),
        "import tensorflow as tf\n"
        "opt = (tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(1e-3)) "
        f'if {value} == "dynamic" else '
        f"tf.keras.optimizers.Adam(1e-3, loss_scale_factor={value}))\n"
        'model.compile(optimizer=opt, loss="mse", auto_scale_loss=False)\n',
        "keras3",
    )
    fix, note = findings
    assert (fix.code, fix.fixed, note.code, note.note) == ("LSO001", True, "LSO022", True)
    assert fix.message.endswith(f"(...) or loss_scale_factor, from {value}")
    assert fix.help.startswith("'dynamic' now runs Keras 3's dynamic rule (LSO022)")


def test_keras3_run_time_conversion_needs_a_module_that_builds_no_loss_scale_object():
    before = (
        "import tensorflow as tf\n"
        "scale = tf.mixed_precision.experimental.FixedLossScale(8) if fixed else 'dynamic'\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer("
        "tf.keras.optimizers.SGD(), scale)\n"
    )
    text, findings = rewrite(before, "keras3")
    assert "experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), scale)" in text
    assert "LSO001" in manual_codes(findings)


def test_other_use_of_the_same_alias_blocks_the_re_pointing():
    before = (
        "from tensorflow.keras.mixed_precision import experimental as mp\n"
        "a = mp.LossScaleOptimizer(opt, 'dynamic')\nb = mp.LossScaleOptimizer(opt, get_scale())\n"
    )
    findings = assert_unchanged(before, "keras2")
    # ... and the import they keep fails on import: reported at its line by the sweep.
    assert manual_codes(findings) == ["LSO101", "LSO001", "LSO001"]
    assert findings[0].line == 1 and "lines 2, 3" in findings[0].help
    withdrawn = findings[1]  # the rewritable call at line 2, held back by the other
    assert (withdrawn.line, withdrawn.message, withdrawn.help) == (
        2,
        "tf.keras.mixed_precision.experimental.LossScaleOptimizer not rewritten: its import or "
        "alias has another use left to you (line 3)",
        "migrate that other use first (or use --target shim), then run again",
    )


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_an_alias_kept_for_another_use_is_written_around_through_the_module_s_own_import(target):
    # The tensorflow/docs guide's shape: the alias stays for the call left to the user (line 4);
    # the call it held back is written through `import tensorflow as tf` instead.
    findings = assert_rewrites(
        "import tensorflow as tf\n"
        "from tensorflow.keras.mixed_precision import experimental as mp\n"
        "a = mp.LossScaleOptimizer(opt, 'dynamic')\nb = mp.LossScaleOptimizer(opt, get_scale())\n",
        "import tensorflow as tf\n"
        "from tensorflow.keras.mixed_precision import experimental as mp\n"
        "a = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
        "b = mp.LossScaleOptimizer(opt, get_scale())\n",
        target,
    )
    assert manual_codes(findings) == ["LSO101", "LSO001"]
    assert [f.line for f in findings if f.code == "LSO001" and f.fixed] == [3]


NOOPS = [
    pytest.param(
        "class LossScaleOptimizer:\n    pass\nopt = LossScaleOptimizer(opt, 'dynamic')\n",
        id="local-class",
    ),
    pytest.param(
        "s = 'tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 1)'\n", id="string"
    ),
    pytest.param(
        "# tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 1)\nx = 1\n", id="comment"
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')  # "
        "compat-lso: ignore\n",
        id="suppressed",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')  # "
        "compat-lso: ignore[LSO001]\n",
        id="suppressed-by-code",
    ),
]


@pytest.mark.parametrize("before", NOOPS)
@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_noop(before, target):
    findings = assert_unchanged(before, target)
    assert not manual_codes(findings)


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_a_parameter_named_tf_is_not_rewritten_but_reported(target):
    # It may be TensorFlow passed in, or anything else: never rewritten, never silent (LSO102).
    findings = assert_unchanged(
        "import tensorflow as tf\ndef f(tf):\n"
        "    return tf.keras.mixed_precision.experimental.LossScaleOptimizer(o, 1)\n",
        target,
    )
    assert manual_codes(findings) == ["LSO102"]
    assert (findings[0].line, findings[0].col) == (3, 12)
    assert "a parameter of f()" in findings[0].message


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_noop_already_new(target):
    # On --target shim the new class itself moves to compat_lso (LSO015).
    before = "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
    # keras3: only LSO022's note (Keras 3's class runs it, with its own dynamic rule).
    findings = assert_unchanged(before, target)
    assert [(f.code, f.note) for f in findings] == (
        [("LSO022", True)] if target == "keras3" else []
    )


def test_unaliased_experimental_module_import_is_re_pointed_with_the_uses():
    assert_rewrites(
        "from tensorflow.keras.mixed_precision import experimental\n"
        "opt = experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        "from tensorflow.keras import mixed_precision\n"
        "opt = mixed_precision.LossScaleOptimizer(opt)\n",
    )


def test_dotted_import_of_the_experimental_module():
    assert_rewrites(
        "import tensorflow.keras.mixed_precision.experimental\n"
        "opt = tensorflow.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        "import tensorflow.keras.mixed_precision\n"
        "opt = tensorflow.keras.mixed_precision.LossScaleOptimizer(opt)\n",
    )


def test_shim_import_goes_after_a_shebang_and_encoding_cookie():
    assert_rewrites(
        "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\ndef build(opt):\n"
        "    from tensorflow.keras.mixed_precision import experimental as mp\n"
        "    return mp.LossScaleOptimizer(opt, 'dynamic')\n",
        "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport compat_lso\n\n\ndef build(opt):\n"
        "    return compat_lso.LossScaleOptimizer(opt)\n",
        "shim",
    )


# Found by the property tests (test_codemod_properties.py).


def test_alias_of_an_alias_is_settled_in_one_run():
    # `LSO = mp.LossScaleOptimizer`: once LSO's only call is rewritten, its read of `mp` no longer
    # blocks `mp`, so set_policy is rewritten in the same run (it took two runs before).
    before = """\
        import tensorflow as tf
        mp = tf.keras.mixed_precision.experimental
        LSO = mp.LossScaleOptimizer
        opt = LSO(opt, 'dynamic')
        mp.set_policy('mixed_float16')
        """
    assert_rewrites(
        before,
        """\
        import compat_lso
        import tensorflow as tf
        mp = tf.keras.mixed_precision
        opt = compat_lso.LossScaleOptimizer(opt)
        mp.set_global_policy('mixed_float16')
        """,
        target="shim",
    )
    assert_rewrites(
        before,
        """\
        import tensorflow as tf
        mp = tf.keras.mixed_precision
        LSO = mp.LossScaleOptimizer
        opt = LSO(opt)
        mp.set_global_policy('mixed_float16')
        """,
        target="keras2",
    )


def test_a_call_through_an_alias_that_cannot_be_repointed_is_written_around_it():
    # `mp` is held by a manual use, so `LSO = mp.LossScaleOptimizer` keeps naming the experimental
    # class: `LSO(opt, 'dynamic')` in the new signature would call the old class wrongly, so it is
    # written through `tf` instead, and the aliases stay as written.
    findings = assert_rewrites(
        """\
        import tensorflow as tf
        mp = tf.keras.mixed_precision.experimental
        LSO = mp.LossScaleOptimizer
        opt = LSO(opt, 'dynamic')
        other = mp.LossScaleOptimizer(o, get_scale())
        """,
        """\
        import tensorflow as tf
        mp = tf.keras.mixed_precision.experimental
        LSO = mp.LossScaleOptimizer
        opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
        other = mp.LossScaleOptimizer(o, get_scale())
        """,
        target="keras2",
    )
    # Both aliases stay, and fail on import: the sweep reports them (LSO101).
    assert manual_codes(findings) == ["LSO101", "LSO101", "LSO001"]
    assert [(f.line, f.fixed) for f in findings] == [(2, False), (3, False), (4, True), (5, False)]


def test_without_another_import_to_write_through_the_call_stays_with_the_alias():
    before = """\
        from tensorflow.keras.mixed_precision import experimental as mp
        LSO = mp.LossScaleOptimizer
        opt = LSO(opt, 'dynamic')
        other = mp.LossScaleOptimizer(o, get_scale())
        """
    findings = assert_unchanged(before, target="keras2")
    assert manual_codes(findings) == ["LSO101", "LSO101", "LSO001", "LSO001"]


def test_a_block_left_without_statements_keeps_a_pass():
    assert_rewrites(
        """\
        try:
            from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer  # old
            from tensorflow.keras.mixed_precision.experimental import DynamicLossScale
        except ImportError:
            pass
        """,
        """\
        try:
            pass
        except ImportError:
            pass
        """,
    )


# -- loss-scale objects whose arguments are only known at run time --------------------------------
LSO = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"
DLS = "tf.mixed_precision.experimental.DynamicLossScale"
NEW = "tf.keras.mixed_precision.LossScaleOptimizer"
RUNTIME_ARGUMENTS = [
    pytest.param(
        f"{LSO}(opt, loss_scale={DLS}(init_scale, period))",
        f"{NEW}(opt, initial_scale=init_scale, dynamic_growth_steps=period)",
        ["keras2", "keras3", "shim"],
        id="dynamic-positional-expressions",
    ),
    pytest.param(
        f"{LSO}(opt, {DLS}(increment_period=steps(), initial_loss_scale=2**scale_exp))",
        f"{NEW}(opt, dynamic_growth_steps=steps(), initial_scale=2**scale_exp)",
        ["keras2", "keras3", "shim"],
        id="dynamic-keywords-keep-their-written-order",
    ),
    pytest.param(
        f"{LSO}(loss_scale={DLS}(FLAGS.init_scale), optimizer=make_optimizer())",
        f"{NEW}(initial_scale=FLAGS.init_scale, inner_optimizer=make_optimizer())",
        ["keras2", "keras3", "shim"],
        id="loss-scale-before-the-optimizer-stays-before-it",
    ),
    pytest.param(
        f"{LSO}(opt, {DLS}(params['loss_scale'], 2000, multiplier=2.0))",
        f"{NEW}(opt, initial_scale=params['loss_scale'])",
        ["keras2", "keras3", "shim"],
        id="literal-defaults-still-omitted",
    ),
    pytest.param(
        f"{LSO}(opt, tf.mixed_precision.experimental.FixedLossScale(FLAGS.loss_scale))",
        f"{NEW}(opt, dynamic=False, initial_scale=FLAGS.loss_scale)",
        ["keras2"],
        id="fixed-expression",
    ),
]


@pytest.mark.parametrize(("call", "after", "targets"), RUNTIME_ARGUMENTS)
def test_runtime_arguments_of_a_loss_scale_in_the_call_move_as_written(call, after, targets):
    for target in targets:
        # On shim, `tf` is read by nothing left, and its import goes.
        header = "import compat_lso\n" if target == "shim" else "import tensorflow as tf\n"
        new = after.replace(NEW, "compat_lso.LossScaleOptimizer") if target == "shim" else after
        findings = assert_rewrites(
            f"import tensorflow as tf\nopt = {call}\n", f"{header}opt = {new}\n", target
        )
        assert not manual_codes(findings)


@pytest.mark.parametrize(
    ("before", "reason"),
    [
        pytest.param(
            f"import tensorflow as tf\nopt = {LSO}(opt, {DLS}(s, multiplier=m))\n",
            "multiplier m is only known at run time",
            id="runtime-multiplier",
        ),
        pytest.param(
            f"import tensorflow as tf\nscale = {DLS}(FLAGS.init_scale)\nstep()\n"
            f"opt = {LSO}(opt, scale)\n",
            "initial_loss_scale=...) is only known at run time",
            id="bound-earlier-with-an-expression-would-be-evaluated-later",
        ),
        pytest.param(
            f"import tensorflow as tf\nopt = {LSO}(opt, "
            "tf.mixed_precision.experimental.FixedLossScale(FLAGS.loss_scale))\n",
            "Keras 3 has no fixed LossScaleOptimizer",
            id="keras3-fixed-expression",
        ),
    ],
)
def test_runtime_arguments_that_cannot_move_are_reported(before, reason):
    from tests.codemods.codemod_cases import rewrite

    target: Target = "keras3" if "Keras 3" in reason else "keras2"
    text, findings = rewrite(before, target)
    assert f"{LSO}(opt, " in text, "the call is left as written"
    manual = [f for f in findings if not f.fixed]
    assert [f.code for f in manual] == ["LSO001"]
    assert reason in manual[0].message


# Where `--target shim` puts `import compat_lso`: in the import block, as ruff's isort rules would
# (`ruff check --select I` changes none of these results beyond blank lines the input lacked too).
_CALL = "LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')"
_OLD = f"tf.keras.mixed_precision.experimental.{_CALL}"
_NEW = "compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD())"
_IN_A_FUNCTION = (
    "def build(opt):\n"
    "    from tensorflow.keras.mixed_precision import experimental as mp\n"
    "    return mp.LossScaleOptimizer(opt, 'dynamic')\n",
    "def build(opt):\n    return compat_lso.LossScaleOptimizer(opt)\n",
)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            f'"""Train."""\nimport os\n\nos.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"\n\n'
            f"import numpy as np\nimport tensorflow as tf\n\nopt = {_OLD}\n",
            f'"""Train."""\nimport os\n\nos.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"\n\n'
            f"import compat_lso\nimport numpy as np\nimport tensorflow as tf\n\nopt = {_NEW}\n",
            id="after-the-environment-setup-sorted-among-third-party",
        ),
        pytest.param(
            "from __future__ import annotations\n\nimport os\n\nimport absl.logging\n"
            f"import tensorflow as tf\n\nopt = {_OLD}\n",
            "from __future__ import annotations\n\nimport os\n\nimport absl.logging\n"
            f"import compat_lso\nimport tensorflow as tf\n\nopt = {_NEW}\n",
            id="after-future-and-stdlib-between-third-party-imports",
        ),
        pytest.param(
            f"import os; os.environ['X'] = '1'\nimport tensorflow as tf\nopt = {_OLD}\n",
            f"import os; os.environ['X'] = '1'\nimport compat_lso\nimport tensorflow as tf\n"
            f"opt = {_NEW}\n",
            id="setup-on-the-import-line-stays-above",
        ),
        pytest.param(
            "import os\n\nfrom tensorflow import keras\n"
            "from tensorflow.keras.mixed_precision import experimental as mp\n\n"
            "opt = mp.LossScaleOptimizer(keras.optimizers.SGD(), 'dynamic')\n",
            "import os\n\nimport compat_lso\nfrom tensorflow import keras\n\n"
            "opt = compat_lso.LossScaleOptimizer(keras.optimizers.SGD())\n",
            id="plain-import-before-the-from-imports",
        ),
        pytest.param(
            "import os\nimport sys\n\n" + _IN_A_FUNCTION[0],
            "import os\nimport sys\n\nimport compat_lso\n\n" + _IN_A_FUNCTION[1],
            id="stdlib-only-starts-the-third-party-section",
        ),
        pytest.param(
            "from . import data\n\n" + _IN_A_FUNCTION[0],
            "import compat_lso\n\nfrom . import data\n\n" + _IN_A_FUNCTION[1],
            id="above-local-imports",
        ),
        pytest.param(
            '"""Doc."""\n' + _IN_A_FUNCTION[0],
            '"""Doc."""\nimport compat_lso\n\n\n' + _IN_A_FUNCTION[1],
            id="no-imports-after-the-docstring",
        ),
        pytest.param(
            "from __future__ import annotations\n" + _IN_A_FUNCTION[0],
            "from __future__ import annotations\n\nimport compat_lso\n\n\n" + _IN_A_FUNCTION[1],
            id="only-future",
        ),
        pytest.param(
            f"import os\ntry:\n    import tensorflow as tf\nexcept ImportError:\n    tf = None\n"
            f"opt = {_OLD}\n",
            f"import os\n\nimport compat_lso\ntry:\n    import tensorflow as tf\n"
            f"except ImportError:\n    tf = None\nopt = {_NEW}\n",
            id="imports-in-try-are-code-not-the-block",
        ),
        pytest.param(
            f"import os\r\n\r\nimport tensorflow as tf\r\nopt = {_OLD}\r\n",
            f"import os\r\n\r\nimport compat_lso\r\nimport tensorflow as tf\r\nopt = {_NEW}\r\n",
            id="crlf",
        ),
    ],
)
def test_shim_import_joins_the_import_block(before, after):
    assert_rewrites(before, after, "shim")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            f"import absl\nimport compat_lso\nimport tensorflow as tf\nopt = {_NEW}\n",
            id="already-migrated",
        ),
        pytest.param(
            "import tensorflow as tf\nmodel = tf.keras.Sequential()\n",
            id="nothing-needs-the-shim",
        ),
    ],
)
def test_shim_import_is_not_added_when_not_needed(text):
    assert_unchanged(text, "shim")


def test_an_existing_shim_import_is_reused_wherever_it_is():
    assert_rewrites(
        f"import tensorflow as tf\nimport compat_lso\nopt = {_OLD}\n",
        f"import tensorflow as tf\nimport compat_lso\nopt = {_NEW}\n",
        "shim",
    )
