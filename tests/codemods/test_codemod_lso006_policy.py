"""LSO006: experimental.Policy(name) -> Policy(name); loss_scale dropped where compile does the
same without it, reported (keras2, keras3) or kept on compat_lso.experimental.Policy (shim)."""

import pytest

from codemods import table
from codemods.apply.engine import migrate
from codemods.table import Target
from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes

MP = "from tensorflow.keras.mixed_precision import experimental as mp\n"
NEW_MP = "from tensorflow.keras import mixed_precision as mp\n"
# What the shim target adds after the import block where compile() must wrap as TF 2.15 did.
SHIM_INSTALL = "\ncompat_lso.install()\n"
TARGETS: list[Target] = ["keras2", "keras3", "shim"]


@pytest.mark.parametrize("target", TARGETS)
def test_rewrites_plain_policy(target):
    assert_rewrites(
        f"{MP}p = mp.Policy('mixed_float16')\n", f"{NEW_MP}p = mp.Policy('mixed_float16')\n", target
    )


DROPPED = [
    pytest.param(
        "mp.Policy('mixed_float16', loss_scale='dynamic')",
        "mp.Policy('mixed_float16')",
        id="dynamic-on-mixed_float16-is-what-compile-does-anyway",
    ),
    pytest.param(
        "mp.Policy('mixed_float16', 'dynamic')",
        "mp.Policy('mixed_float16')",
        id="dynamic-positional",
    ),
    pytest.param(
        "mp.Policy(name='mixed_float16', loss_scale='dynamic')",
        "mp.Policy(name='mixed_float16')",
        id="both-by-keyword",
    ),
    pytest.param(
        "mp.Policy(loss_scale='dynamic', name='mixed_float16')",
        "mp.Policy(name='mixed_float16')",
        id="loss-scale-first",
    ),
    pytest.param(
        "mp.Policy(policy_name, loss_scale='auto')",
        "mp.Policy(policy_name)",
        id="auto-is-the-old-default-for-any-name",
    ),
    pytest.param(
        "mp.Policy('float32', loss_scale=None)",
        "mp.Policy('float32')",
        id="none-on-a-policy-compile-never-wraps",
    ),
    pytest.param(
        "mp.Policy('mixed_bfloat16', None)",
        "mp.Policy('mixed_bfloat16')",
        id="none-positional-on-bfloat16",
    ),
    pytest.param(
        "mp.Policy('mixed_float16', loss_scale=mp.DynamicLossScale())",
        "mp.Policy('mixed_float16')",
        id="default-dynamic-loss-scale-object-is-what-dynamic-meant",
    ),
    pytest.param(
        "mp.Policy(\n    'mixed_float16',\n    loss_scale='dynamic',\n)",
        "mp.Policy(\n    'mixed_float16',\n)",
        id="multiline-with-trailing-comma",
    ),
    pytest.param(
        "mp.Policy('mixed_float16',  # fp16 on GPU\n          loss_scale='dynamic')",
        "mp.Policy('mixed_float16'  # fp16 on GPU\n          )",
        id="a-comment-between-the-arguments-stays",
    ),
]


@pytest.mark.parametrize(("call", "after"), DROPPED)
@pytest.mark.parametrize("target", TARGETS)
def test_loss_scale_is_dropped_where_compile_wraps_the_same(call, after, target):
    wraps = "mixed_float16" in call or "policy_name" in call
    # Where compile() may wrap (a 'mixed_float16' model), Keras 3 wraps in its own class, whose
    # rule differs from TF 2.15's: the shim target adds compat_lso.install(), after which
    # compile() wraps as TF 2.15 did (as under `python -m compat_lso run`); keras3 notes it.
    installed = SHIM_INSTALL if wraps and target == "shim" else ""
    findings = assert_rewrites(
        f"{MP}p = {call}\nmp.set_policy(p)\n",
        f"{'import compat_lso' + chr(10) if installed else ''}{NEW_MP}{installed}"
        f"p = {after}\nmp.set_global_policy(p)\n",
        target,
    )
    assert not manual_codes(findings)
    codes = {"LSO004", "LSO006"} | ({"LSO023"} if installed else set())
    assert {f.code for f in findings} == codes
    notes = [f for f in findings if f.note]
    assert len(notes) == (1 if wraps and target == "keras3" else 0)
    if notes:
        assert notes[0].message.startswith("compile() then wraps in Keras 3's LossScaleOptimizer")
        assert "--target shim" in notes[0].help


def test_the_only_blocker_of_a_file_no_longer_blocks_it():
    # NVIDIA DeepLearningExamples' efficientnet setup (tests/codemods/forms/README.md): every
    # other rewrite of the file used to be withdrawn because this Policy kept the alias.
    before = (
        "import tensorflow as tf\n"
        "policy = tf.keras.mixed_precision.experimental.Policy('mixed_float16', "
        "loss_scale='dynamic')\n"
        "tf.keras.mixed_precision.experimental.set_policy(policy)\n"
    )
    after = (
        "import tensorflow as tf\n"
        "policy = tf.keras.mixed_precision.Policy('mixed_float16')\n"
        "tf.keras.mixed_precision.set_global_policy(policy)\n"
    )
    for target in TARGETS:
        expected = after
        if target == "shim":
            expected = "import compat_lso\n" + after.replace("tf\n", "tf\n" + SHIM_INSTALL, 1)
        assert not manual_codes(assert_rewrites(before, expected, target))


KEPT = [
    pytest.param(
        "mp.Policy('mixed_float16', loss_scale=128)", "would no longer reach", id="number"
    ),
    pytest.param(
        "mp.Policy('mixed_float16', 128)", "would no longer reach", id="number-positional"
    ),
    pytest.param(
        "mp.Policy('mixed_float16', loss_scale=scale)",
        "loss_scale=scale: compile() scaled by a number, or not; now dynamically",
        id="runtime-value",
    ),
    pytest.param(
        "mp.Policy('mixed_float16', loss_scale=FLAGS.loss_scale)",
        "loss_scale=FLAGS.loss_scale: compile() scaled by a number, or not; now dynamically",
        id="runtime-attribute",
    ),
    pytest.param(
        "mp.Policy('mixed_float16', loss_scale=mp_ls.DynamicLossScale(4096))",
        "would no longer reach",
        id="a-loss-scale-object",
    ),
    pytest.param(
        "mp.Policy('float16', loss_scale='dynamic')",
        "not for the new one",
        id="dynamic-on-float16-compile-no-longer-wraps",
    ),
    pytest.param(
        "mp.Policy(name, loss_scale='dynamic')", "only known at run time", id="dynamic-runtime-name"
    ),
    pytest.param(
        "mp.Policy('mixed_float16', loss_scale=None)",
        "meant no loss scaling",
        id="none-on-mixed_float16-compile-wraps-anyway",
    ),
    pytest.param(
        "mp.Policy(name, loss_scale=None)", "only known at run time", id="none-runtime-name"
    ),
    pytest.param("mp.Policy(*args)", "unpacked", id="star-args"),
    pytest.param("mp.Policy('mixed_float16', **options)", "unpacked", id="star-star-kwargs"),
]


@pytest.mark.parametrize(("call", "reason"), KEPT)
@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_other_loss_scales_are_reported_with_the_reason(call, reason, target, request):
    findings = assert_unchanged(f"{MP}p = {call}\n", target)
    # The import kept for it fails on import: the sweep reports it too (LSO101).
    assert manual_codes(findings) == ["LSO101", "LSO006"]
    policy = findings[1]
    assert reason in policy.message
    # What reaches compile() decides the help: a value only known at run time may be a number
    # or None, and None has no scale to give (issue 39, case 3).
    helps = {
        "runtime-value": table.POLICY_RUN_TIME_HELP,
        "runtime-attribute": table.POLICY_RUN_TIME_HELP,
        "none-on-mixed_float16-compile-wraps-anyway": table.POLICY_NONE_HELP,
        "none-runtime-name": table.POLICY_NONE_HELP,
    }
    expected = helps.get(request.node.callspec.id.split("-", 1)[1], {}).get(target)
    assert policy.help == (expected or table.RULES_BY_CODE["LSO006"].instruction)
    assert (policy.line, policy.col) == (2, 5)


@pytest.mark.parametrize(("call", "reason"), KEPT)
def test_shim_keeps_other_loss_scales_on_the_shim_policy_and_installs_for_compile(call, reason):
    # compat_lso.experimental.Policy's loss scale reaches compile() once compat_lso.install() has
    # run (as under `python -m compat_lso run`): the shim target adds that call, once.
    result = migrate(f"{MP}p = {call}\nmp.set_policy(p)\n", "shim")
    shim_call = call.replace("mp.Policy", "compat_lso.experimental.Policy")
    assert result.text == (
        f"import compat_lso\n{NEW_MP}{SHIM_INSTALL}p = {shim_call}\nmp.set_global_policy(p)\n"
    )
    assert not [f for f in result.findings if not f.fixed]
    (fixed,) = [f for f in result.findings if f.code == "LSO006"]
    assert "compat_lso.install() added" in fixed.message
    assert reason in fixed.help
    assert migrate(result.text, "shim").text == result.text


def test_a_blocked_alias_withdraws_the_drop_and_reports_it():
    before = f"{MP}p = mp.Policy('mixed_float16', loss_scale='dynamic')\nq = mp.Policy(n, 64)\n"
    findings = assert_unchanged(before, "keras2")
    assert manual_codes(findings) == ["LSO101", "LSO006", "LSO006"]


def test_noop_for_new_policy():
    assert_unchanged(
        "from tensorflow.keras import mixed_precision as mp\np = mp.Policy('mixed_float16')\n"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_suppressed_policy_is_left_as_written(target):
    before = f"{MP}p = mp.Policy('mixed_float16', loss_scale=128)  # compat-lso: ignore[LSO006]\n"
    # The use is suppressed; the import it keeps is not (docs/codemod.md: suppress it too).
    assert manual_codes(assert_unchanged(before, target)) == ["LSO101"]
    suppressed_too = before.replace("\np =", "  # compat-lso: ignore[LSO101]\np =", 1)
    assert not manual_codes(assert_unchanged(suppressed_too, target))


def test_a_run_time_loss_scale_says_what_compile_did_with_a_number_and_with_none():
    # Issue 39, case 3 (MLCommons' performance.py): None by default meant no loss scaling by
    # compile(), which the new 'mixed_float16' Policy's compile() adds; the help had no scale
    # to give for it.
    before = (
        "import tensorflow as tf\n"
        "def set_policy(name, loss_scale=None):\n"
        "    return tf.keras.mixed_precision.experimental.Policy(name, loss_scale=loss_scale)\n"
    )
    for target in ("keras2", "keras3"):
        (finding,) = [f for f in migrate(before, target).findings if f.code == "LSO006"]
        assert finding.message.endswith(
            "loss_scale=loss_scale (default None): compile() scaled by a number, or not; now "
            "dynamically for mixed_float16"
        )
        assert finding.help == table.POLICY_RUN_TIME_HELP[target]
        assert "None" in finding.help


# Issue 38, item 1 (a GAN's model module): the optimizer both compile() calls get is already a loss
# scale optimizer, which compile() leaves as it is on every Keras: the Policy's 1024 was never read.
GAN = """\
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

policy = mixed_precision.Policy("mixed_float16", loss_scale=1024)
mixed_precision.set_policy(policy)


class GAN:
    def __init__(self, generator, discriminator):
        opt = tf.keras.optimizers.Adam(2e-4)
        self.optimizer = mixed_precision.LossScaleOptimizer(opt, loss_scale="dynamic")
        self.generator = generator
        self.discriminator = discriminator
        self.generator.compile(optimizer=self.optimizer, loss="mse")
        self.discriminator.compile(optimizer=self.optimizer, loss="mse")
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_loss_scale_no_compile_reads_is_dropped_with_a_note_that_no_number_changes(target):
    result = migrate(GAN, target)
    assert 'mixed_precision.Policy("mixed_float16")\n' in result.text
    assert "1024" not in result.text and "initial_scale" not in result.text
    policy = [f for f in result.findings if f.code == "LSO006"]
    assert [(f.fixed, f.note, f.line) for f in policy] == [(True, True, 4), (True, False, 4)]
    assert policy[0].message == (
        "loss_scale=1024 was never read: every compile() here gets a loss scale optimizer "
        "(lines 14, 15); no number changes"
    )
    assert policy[0].help == table.POLICY_DEAD_HELP
    # No help proposes a change: none is left to do at the Policy, and no install() is added.
    # (On keras3 the one optimizer two compile() calls share is LSO027's, at the second.)
    assert manual_codes(result.findings) == (["LSO027"] if target == "keras3" else [])
    assert "compat_lso.install()" not in result.text


def test_a_loss_scale_is_live_where_one_compile_gets_a_plain_optimizer():
    live = GAN.replace(
        "self.discriminator.compile(optimizer=self.optimizer",
        ("self.discriminator.compile(optimizer=opt"),
    )
    (finding,) = [f for f in migrate(live, "keras2").findings if f.code == "LSO006"]
    assert not finding.fixed and "loss_scale=1024 would no longer reach" in finding.message
