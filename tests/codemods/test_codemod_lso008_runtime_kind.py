"""LSO008 where the module does not decide the kind of `opt` (a parameter, an attribute, a call of
another module): the dispatch TF 2.4-2.8's function made, written as code that makes it at run
time (codemods/rules/_kind_at_run_time.py): TensorFlow's TF1 function for a tf.compat.v1
optimizer, Keras's LossScaleOptimizer and grappler's pass for anything else; on keras3 a
statement before refuses a LossScaleOptimizer, as TF 2.4-2.8 did (Keras 3's class would wrap it
again). The numbers: the migrated code trains to TF 2.15's (references/patterns.tf215.json) with
an optimizer of either kind passed as a parameter, on data that overflows float16."""

from pathlib import Path

import pytest

from codemods.apply.engine import migrate
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite
from tests.old_code import harness, record

KERAS_TARGETS = pytest.mark.parametrize("target", ["keras2", "keras3"])
OPTIONS = 'tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})'
V1 = "tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite"
FACT = (
    "tf.train.experimental.enable_mixed_precision_graph_rewrite -> by kind at run time: "
    "tf.compat.v1's or LossScaleOptimizer + auto_mixed_precision"
)


def _guard(name, indent="    "):
    return (
        f"if isinstance({name}, tf.keras.mixed_precision.LossScaleOptimizer):\n"
        f'{indent}raise ValueError("{name} must not already be a LossScaleOptimizer")\n'
    )


# -- rewritten -------------------------------------------------------------------------------------
@KERAS_TARGETS
def test_a_parameter_is_dispatched_by_kind_at_run_time(target):
    # covid-twitter-bert's and mlcommons' configure_optimizer (tests/codemods/forms/): the
    # parameter may already be a LossScaleOptimizer (the branch above wraps it): Keras 2's class
    # raises TypeError then, Keras 3's would wrap it again, so keras3 raises as TF 2.4-2.8 did.
    guard = "".join("    " + line for line in _guard("optimizer").splitlines(True))
    findings = assert_rewrites(
        "import tensorflow as tf\n"
        "def configure_optimizer(optimizer):\n"
        "    optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)\n"
        "    return optimizer\n",
        "import tensorflow as tf\n"
        "def configure_optimizer(optimizer):\n"
        + (guard if target == "keras3" else "")
        + f"    {OPTIONS}\n"
        f"    optimizer = ({V1}(optimizer)\n"
        "        if isinstance(optimizer, tf.compat.v1.train.Optimizer)\n"
        "        else tf.keras.mixed_precision.LossScaleOptimizer(optimizer))\n"
        "    return optimizer\n",
        target,
    )
    assert [(f.code, f.fixed, f.note) for f in findings] == [("LSO008", True, False)] + (
        [("LSO022", True, True)] if target == "keras3" else []
    )
    assert findings[0].message == FACT
    assert not findings[0].help


@KERAS_TARGETS
def test_a_call_is_bound_to_a_fresh_name_first_and_a_loss_scale_object_kept(target):
    # BERT's run_classifier.py: `optimization.LAMBOptimizer(learning_rate=0.0)` is evaluated
    # once; the FixedLossScale stays for the TF1 function (LSO007 moves it to tf.compat.v1),
    # Keras 2's class takes its value. Keras 3 has no fixed LossScaleOptimizer: reported.
    source = """\
        import optimization
        import tensorflow as tf
        def model_fn(optimizer):
            scale = tf.train.experimental.FixedLossScale(1)
            op = tf.train.experimental.enable_mixed_precision_graph_rewrite(
                optimization.LAMBOptimizer(learning_rate=0.0), scale)
            op = tf.train.experimental.enable_mixed_precision_graph_rewrite(
                optimization.LAMBOptimizer(learning_rate=0.0))
        """
    if target == "keras3":
        findings = migrate(source.replace("        ", ""), target).findings
        assert [(f.code, f.fixed, f.line) for f in findings if f.code == "LSO008"] == [
            ("LSO008", False, 5),
            ("LSO008", True, 7),
        ]
        assert findings[1].message.endswith(
            "_rewrite: if a Keras optimizer, Keras 3 has no fixed LossScaleOptimizer"
        )
        return
    assert_rewrites(
        source,
        f"""\
        import optimization
        import tensorflow as tf
        def model_fn(optimizer):
            scale = tf.compat.v1.mixed_precision.FixedLossScale(1)
            optimizer_2 = optimization.LAMBOptimizer(learning_rate=0.0)
            {OPTIONS}
            op = ({V1}(
                optimizer_2, scale)
                if isinstance(optimizer_2, tf.compat.v1.train.Optimizer)
                else tf.keras.mixed_precision.LossScaleOptimizer(optimizer_2, dynamic=False, initial_scale=1))
            optimizer_2 = optimization.LAMBOptimizer(learning_rate=0.0)
            {OPTIONS}
            op = ({V1}(
                optimizer_2)
                if isinstance(optimizer_2, tf.compat.v1.train.Optimizer)
                else tf.keras.mixed_precision.LossScaleOptimizer(optimizer_2))
        """,  # noqa: E501
    )


@KERAS_TARGETS
def test_a_dynamic_loss_scale_of_run_time_values_is_read_where_the_code_runs(target):
    # BERT's optimization.py: the TF1 branch takes the object; Keras's class its values, read
    # from it as TF 2.8's Keras read them (initial_loss_scale, increment_period; multiplier 2).
    guard = "".join("  " + line for line in _guard("optimizer", "  ").splitlines(True))
    scale = (
        "  loss_scaler = tf.{}.DynamicLossScale(\n"
        "      initial_loss_scale=init_loss_scale, increment_period=1000, multiplier=2.0)\n"
    )
    head = "import tensorflow as tf\ndef create_optimizer(optimizer, init_loss_scale):\n"
    tail = "  return optimizer, tf.identity(loss_scaler())\n"
    assert_rewrites(
        head
        + scale.format("train.experimental")
        + "  optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite("
        "optimizer, loss_scaler)\n" + tail,
        head
        + scale.format("compat.v1.mixed_precision")
        + (guard if target == "keras3" else "")
        + f"  {OPTIONS}\n"
        f"  optimizer = ({V1}(optimizer, loss_scaler)\n"
        "      if isinstance(optimizer, tf.compat.v1.train.Optimizer)\n"
        "      else tf.keras.mixed_precision.LossScaleOptimizer(optimizer, "
        "initial_scale=loss_scaler.initial_loss_scale, "
        "dynamic_growth_steps=loss_scaler.increment_period))\n" + tail,
        target,
    )
    # Another multiplier: Keras's class always doubles and halves.
    findings = migrate(
        "import tensorflow as tf\n"
        "def create(optimizer, n):\n"
        "    scale = tf.train.experimental.DynamicLossScale(n, multiplier=4)\n"
        "    return tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer, scale)\n",
        target,
    ).findings
    assert manual_codes(findings) == ["LSO008"]
    findings = [f for f in findings if f.code == "LSO008"]
    assert "multiplier 4 is not 2" in findings[0].message


def test_a_run_time_scale_of_an_attribute_on_keras2():
    # mlcommons' resnet_runnable.py, in its two-space style, the call already in parentheses;
    # the help says what a run-time loss scale leaves to check (LSO001's).
    findings = assert_rewrites(
        """\
        import tensorflow as tf
        class Runnable:
          def __init__(self, loss_scale):
            self.optimizer = (
                tf.train.experimental.enable_mixed_precision_graph_rewrite(
                    self.optimizer, loss_scale))
        """,
        f"""\
        import tensorflow as tf
        class Runnable:
          def __init__(self, loss_scale):
            {OPTIONS}
            self.optimizer = (
                {V1}(
                    self.optimizer, loss_scale)
                if isinstance(self.optimizer, tf.compat.v1.train.Optimizer)
                else tf.keras.mixed_precision.LossScaleOptimizer(self.optimizer, dynamic=loss_scale == "dynamic", initial_scale=None if loss_scale == "dynamic" else loss_scale))
        """,  # noqa: E501
    )
    assert "LossScale object is no longer accepted" in findings[0].help


@pytest.mark.parametrize(
    "code",
    [
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n",
        "def make(hvd, opt):\n"
        "    opt = hvd.DistributedOptimizer(tf.compat.v1.train.AdamOptimizer())\n"
        "    return tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n",
        "opt = tf.keras.optimizers.SGD() if k else tf.compat.v1.train.AdamOptimizer()\n"
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, 'dynamic')\n",
        "if k:\n"
        "    opt = tf.keras.optimizers.SGD()\n"
        "else:\n"
        "    opt = tf.compat.v1.train.AdamOptimizer()\n"
        "tf.train.experimental.enable_mixed_precision_graph_rewrite(\n"
        "    opt=opt, loss_scale=tf.train.experimental.DynamicLossScale(2**10))\n",
    ],
)
@KERAS_TARGETS
def test_other_undecided_forms_are_dispatched(code, target):
    source = "import tensorflow as tf\n" + code
    result = migrate(source, target)
    [finding] = [f for f in result.findings if f.code == "LSO008"]
    assert (finding.fixed, finding.message) == (True, FACT)
    assert "tf.train.experimental" not in result.text
    assert ("raise ValueError" in result.text) == (target == "keras3")
    if "DynamicLossScale" in code:  # both branches: the object, and its value translated
        assert "loss_scale=tf.compat.v1.mixed_precision.DynamicLossScale(2**10))" in result.text
        assert "LossScaleOptimizer(opt, initial_scale=2**10))" in result.text


# -- left to the user ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "why"),
    [
        (  # the call must be evaluated once, before the loss scale: not movable
            "op = tf.train.experimental.enable_mixed_precision_graph_rewrite(\n"
            "    loss_scale='dynamic', opt=make())\n",
            "is not the call's first argument to move",
        ),
        (  # what is moved is copied as written: none that other rules rewrite
            "op = tf.train.experimental.enable_mixed_precision_graph_rewrite(\n"
            "    make(tf.keras.optimizers))\n",
            "is built with names other rules rewrite",
        ),
        (
            "ops = [tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)]\n",
            "the call is not the whole value of a statement of its own line",
        ),
    ],
)
@KERAS_TARGETS
def test_where_the_dispatch_cannot_be_written_exactly_the_finding_stays(code, why, target):
    findings = assert_unchanged("import tensorflow as tf\n" + code, target)
    assert manual_codes(findings) == ["LSO008"]
    assert findings[0].message.endswith(why)
    assert "tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite" in findings[0].help


@pytest.mark.parametrize("scale", ["128", "FLAGS.loss_scale"])
def test_a_fixed_or_run_time_scale_stays_manual_on_keras3(scale):
    findings = assert_unchanged(
        "import tensorflow as tf\n"
        "def configure(opt):\n"
        f"    return tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, {scale})\n",
        "keras3",
    )
    assert manual_codes(findings) == ["LSO008"]
    assert findings[0].message.endswith(
        "Keras 3 has no fixed LossScaleOptimizer"
        if scale == "128"
        else "loss_scale=FLAGS.loss_scale is only known at run time"
    )


# -- the numbers -----------------------------------------------------------------------------------
PATTERNS = Path(__file__).parents[1] / "old_code" / "scripts" / "patterns"
REFERENCE = record.load(PATTERNS.parents[1] / "references" / "patterns.tf215.json")
# (twin: the TF 2.15 program whose numbers are the reference, what passes the optimizer through
# a parameter instead; the new text comes after a `configure_optimizer` of its own).
THROUGH_A_PARAMETER = {
    "graph_rewrite_keras_fit.py": (
        "opt = tf.keras.optimizers.SGD(learning_rate=2**-8)\n"
        f"{OPTIONS}\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
        "opt = configure_optimizer(tf.keras.optimizers.SGD(learning_rate=2**-8))\n",
        "",
    ),
    "graph_rewrite_tf1_session.py": (
        "    optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=2**-10)\n"
        "    optimizer = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(\n"
        '        optimizer, loss_scale="dynamic"\n'
        "    )\n",
        "    optimizer = configure_optimizer(\n"
        "        tf.compat.v1.train.GradientDescentOptimizer(learning_rate=2**-10)\n"
        "    )\n",
        ', loss_scale="dynamic"',
    ),
}


READ = "self.scales.append(float(opt.loss_scale))"
# TF 2.4-2.8 raised ValueError for each (`_wrap_optimizer`); the migrated code must raise too.
REFUSALS = """\
import tensorflow as tf

from common import report


def configure_optimizer(optimizer):
    return tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)


def keras_lso():
    return tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())


def v1_lso():
    v1 = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    return tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(v1)


raised = {}
for build in (keras_lso, v1_lso, lambda: "sgd"):
    try:
        configure_optimizer(build())
        raised[build.__name__] = None
    except Exception as error:
        raised[build.__name__] = type(error).__name__


def configure_with_a_loss_scale(optimizer, initial):
    scale = tf.train.experimental.DynamicLossScale(
        initial_loss_scale=initial, increment_period=7, multiplier=2.0
    )
    return tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer, scale)


wrapped = configure_with_a_loss_scale(tf.keras.optimizers.SGD(), 2.0**9)
tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()
report(raised=raised, scale=[float(wrapped.initial_scale), int(wrapped.dynamic_growth_steps)])
"""


def test_an_optimizer_of_either_kind_through_a_parameter_trains_to_tf215s_numbers(tmp_path):
    # The TF 2.15 twins of tests/old_code/scripts/patterns/tf21/graph_rewrite_*.py, with the
    # optimizer built by the caller of a function that calls TF 2.4-2.8's
    # enable_mixed_precision_graph_rewrite on its parameter: a Keras SGD into compile() and fit()
    # (an inf sample: that step is skipped), a tf.compat.v1 one in a TF1 Session (gradients that
    # overflow float16 at the initial scale: five steps skipped). Migrated to the target of the
    # installed Keras, both run in one process. Keras 2 (TF 2.15): TF 2.15's numbers, recorded
    # natively. Keras 3: the TF1 Session's numbers bit for bit; fit's as the known-kind rewrite
    # of the twin itself gives them in the same process (Keras 3's dynamic rule, LSO022's note).
    from tests.shim.backend import IS_KERAS_3  # imports TensorFlow: here, not for the rule tests

    scripts = []
    for twin, (old, new, loss_scale) in THROUGH_A_PARAMETER.items():
        text = (PATTERNS / twin).read_text(encoding="utf-8")
        assert old in text, twin
        imports, rest = text.split("\nfrom common import", 1)
        function = (
            "\n\ndef configure_optimizer(optimizer):\n"
            "    return tf.train.experimental.enable_mixed_precision_graph_rewrite(\n"
            f"        optimizer{loss_scale}\n"
            "    )\n"
        )
        script = tmp_path / twin
        script.write_text(
            imports
            + "\nfrom common import"
            + rest.replace(old, new).replace("\n\n", function + "\n\n", 1),
            encoding="utf-8",
        )
        source = script.read_text(encoding="utf-8")
        fixed = [f.message for f in migrate(source, "keras2").findings if f.code == "LSO008"]
        assert fixed == [FACT], twin  # decided at run time, not from the module
        if IS_KERAS_3 and READ in source:
            # Keras 3's class has no loss_scale: reported at the line (the codemod cannot see
            # that `opt` holds one), fixed here as the known-kind rewrite of the twin writes it.
            findings = migrate(source, "keras3").findings
            line = source[: source.index(READ)].count("\n") + 1
            assert ("LSO017", line, False) in [(f.code, f.line, f.fixed) for f in findings]
            written = migrate(text, "keras3").text
            fix = next(x.strip() for x in written.splitlines() if "self.scales.append(" in x)
            script.write_text(source.replace(READ, fix), encoding="utf-8")
        scripts.append(script)
    refusals = tmp_path / "refusals.py"
    refusals.write_text(REFUSALS, encoding="utf-8")
    mode = "migrate-keras3" if IS_KERAS_3 else "migrate-keras2"
    known = PATTERNS / "graph_rewrite_keras_fit.py"
    runs = [*scripts, refusals, *([known] if IS_KERAS_3 else [])]
    outcomes = {}
    for script, outcome in harness.run_plain_modes({mode: runs}, pythonpath=[PATTERNS])[
        mode
    ].items():
        if isinstance(outcome, harness.ScriptFailed):
            raise outcome
        outcomes[script] = outcome
    keras_fit, tf1_session = (outcomes[s.resolve()] for s in scripts)
    assert tf1_session == REFERENCE["old_code/scripts/patterns/graph_rewrite_tf1_session.py"]
    assert tf1_session["iterations"][:6] == [0] * 6  # the overflowing steps were skipped
    if IS_KERAS_3:
        assert keras_fit == outcomes[known.resolve()]
    else:
        assert keras_fit == REFERENCE["old_code/scripts/patterns/graph_rewrite_keras_fit.py"]
    assert keras_fit["scales"][5] == keras_fit["scales"][4] / 2  # the inf sample's step skipped
    # Raised where TF 2.4-2.8 raised ValueError: a Keras LossScaleOptimizer (Keras 2's class
    # raises TypeError; on keras3 the statement before raises ValueError, where Keras 3's class
    # would wrap it again), TensorFlow's TF1 one (TensorFlow's TF1 function), a non-optimizer
    # (Keras 2's class: TypeError; Keras 3's: AttributeError).
    # A DynamicLossScale of run-time values: Keras's class gets them as TF 2.8's Keras did.
    assert outcomes[refusals.resolve()]["scale"] == [2.0**9, 7]
    assert outcomes[refusals.resolve()]["raised"] == {
        "keras_lso": "ValueError" if IS_KERAS_3 else "TypeError",
        "v1_lso": "ValueError",
        "<lambda>": "AttributeError" if IS_KERAS_3 else "TypeError",
    }


def test_a_loss_scale_read_after_the_choice_by_kind_is_stable_on_keras3():
    # The first run writes the choice by kind at run time; a second run must see it as the call
    # it came from (either kind of optimizer), not as the Keras class of its else branch.
    source = (
        "import tensorflow as tf\n"
        "def train(optimizer):\n"
        "    optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(\n"
        "        optimizer, loss_scale='dynamic')\n"
        "    return optimizer.loss_scale\n"
    )
    text, findings = rewrite(source, "keras3")
    assert "isinstance(optimizer, tf.compat.v1.train.Optimizer)" in text
    assert "LSO017" in manual_codes(findings)
    again, second = rewrite(text, "keras3")
    assert again == text, "a second run must change nothing"
    assert "LSO017" in manual_codes(second)
