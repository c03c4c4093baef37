"""LSO025: the removed experimental module held as a value, or reached through a name bound more
than one way.

Real forms: OpenNMT-tf's `wrapper_class` (the experimental class in one branch, TF 2.4's in the
other) and tensorflow/recommenders-addons' `mixed_precision` imported from tf_keras or tf.keras
(tests/codemods/forms/README.md).
"""

from __future__ import annotations

import pytest

from tests.codemods.codemod_cases import assert_rewrites, assert_unchanged, manual_codes, rewrite

FALLBACK = (
    "try:\n"
    "    from tf_keras import mixed_precision\n"
    "except ImportError:\n"
    "    from tensorflow.keras import mixed_precision\n"
)
INSTALL = "import compat_lso\n\ncompat_lso.install()\n\n"


@pytest.mark.parametrize("target", ["keras2", "keras3"])
@pytest.mark.parametrize(
    ("call", "after"),
    [
        ("experimental.set_policy('mixed_float16')", "set_global_policy('mixed_float16')"),
        ("experimental.global_policy()", "global_policy()"),
    ],
)
def test_a_name_bound_to_either_keras_module_gets_the_rename_each_has(target, call, after):
    findings = assert_rewrites(
        FALLBACK + f"p = mixed_precision.{call}\n",
        FALLBACK + f"p = mixed_precision.{after}\n",
        target,
    )
    (fix,) = findings
    assert fix.code == "LSO025" and fix.fixed
    assert fix.message.endswith("(as each module `mixed_precision` may hold has it)")


def test_the_shim_target_adds_install_to_the_rename():
    findings = assert_rewrites(
        FALLBACK + "mixed_precision.experimental.set_policy(p)\n",
        INSTALL + FALLBACK + "mixed_precision.set_global_policy(p)\n",
        "shim",
    )
    assert [f.code for f in findings] == ["LSO025"]


SHIM_CASES = [
    pytest.param(
        """\
        import tensorflow as tf
        class Trainer:
            def __init__(self):
                self._mixed_precision = tf.keras.mixed_precision.experimental

            def setup(self):
                self._mixed_precision.set_policy('mixed_float16')
        """,
        """\
        import compat_lso

        compat_lso.install()

        class Trainer:
            def __init__(self):
                self._mixed_precision = compat_lso.experimental

            def setup(self):
                self._mixed_precision.set_policy('mixed_float16')
        """,
        "held as a value",
        id="stored-in-an-attribute",
    ),
    pytest.param(
        """\
        import tensorflow as tf
        def mixed_precision_module():
            return tf.keras.mixed_precision.experimental
        """,
        """\
        import compat_lso

        compat_lso.install()

        def mixed_precision_module():
            return compat_lso.experimental
        """,
        "held as a value",
        id="returned",
    ),
    pytest.param(
        """\
        from tensorflow.keras.mixed_precision import experimental as mp
        mp.set_policy('mixed_float16')
        exported = mp
        """,
        """\
        import compat_lso
        from tensorflow.keras import mixed_precision as mp

        compat_lso.install()
        mp.set_global_policy('mixed_float16')
        exported = compat_lso.experimental
        """,
        "`exported` is not read here",
        id="an-alias-another-module-may-import",
    ),
    pytest.param(
        """\
        from tensorflow.keras.mixed_precision import experimental as mp
        registry = {'mp': mp}
        mp.set_policy('mixed_float16')
        """,
        """\
        import compat_lso
        from tensorflow.keras import mixed_precision as mp

        compat_lso.install()
        registry = {'mp': compat_lso.experimental}
        mp.set_global_policy('mixed_float16')
        """,
        "held as a value",
        id="an-imported-name-put-in-a-container",
    ),
    pytest.param(
        """\
        import tensorflow as tf
        if tf_supports_new_api:
            wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer
            wrapper_kwargs = {}
        else:
            wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer
            wrapper_kwargs = dict(loss_scale="dynamic")
        if not isinstance(optimizer, wrapper_class):
            optimizer = wrapper_class(optimizer, **wrapper_kwargs)
        """,
        """\
        import compat_lso
        if tf_supports_new_api:
            wrapper_class = compat_lso.LossScaleOptimizer
            wrapper_kwargs = {}
        else:
            wrapper_class = compat_lso.experimental.LossScaleOptimizer
            wrapper_kwargs = dict(loss_scale="dynamic")
        if not isinstance(optimizer, wrapper_class):
            optimizer = wrapper_class(optimizer, **wrapper_kwargs)
        """,
        "`wrapper_class` is bound more than one way",
        id="a-class-alias-bound-two-ways",
    ),
]


@pytest.mark.parametrize(("before", "after", "why"), SHIM_CASES)
def test_the_shim_target_writes_its_experimental_module_for_the_value(before, after, why):
    findings = assert_rewrites(before, after, "shim")
    assert manual_codes(findings) == []
    (fix,) = [f for f in findings if f.code == "LSO025"]
    assert why in fix.message


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            "import tensorflow as tf\n"
            "def module():\n    return tf.keras.mixed_precision.experimental\n"
            "policy = module().get_layer_policy(layer)\n",
            id="a-member-the-shim-lacks-is-read",
        ),
        pytest.param(
            "import tensorflow as tf\n"
            "class T:\n    def __init__(self):\n"
            "        self.mp = tf.keras.mixed_precision.experimental\n"
            "    def f(self):\n        self.mp.get_layer_policy(layer)\n",
            id="a-member-the-shim-lacks-is-read-through-an-attribute",
        ),
    ],
)
def test_the_shim_target_leaves_a_value_whose_members_it_lacks_reported(before):
    findings = assert_unchanged(before, "shim")
    assert "LSO025" not in [f.code for f in findings]
    assert "LSO103" in manual_codes(findings)


@pytest.mark.parametrize("target", ["keras2", "keras3"])
@pytest.mark.parametrize(
    "before",
    [
        pytest.param(SHIM_CASES[0].values[0], id="stored-in-an-attribute"),
        pytest.param(SHIM_CASES[1].values[0], id="returned"),
    ],
)
def test_keras_targets_leave_the_module_held_as_a_value_reported(before, target):
    findings = assert_unchanged(before, target)
    assert "LSO025" not in [f.code for f in findings]
    assert "LSO103" in manual_codes(findings)


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            "try:\n    from tf_keras import mixed_precision\nexcept ImportError:\n"
            "    mixed_precision = load_my_own()\n"
            "mixed_precision.experimental.set_policy('mixed_float16')\n",
            id="one-binding-is-not-a-keras-module",
        ),
        pytest.param(
            "try:\n    from tf_keras import mixed_precision\nexcept ImportError:\n"
            "    from my_project import mixed_precision\n"
            "mixed_precision.experimental.set_policy('mixed_float16')\n",
            id="one-binding-is-another-module",
        ),
        pytest.param(
            FALLBACK + "mixed_precision.experimental.Policy('mixed_float16', loss_scale=128)\n",
            id="a-member-whose-arguments-changed",
        ),
    ],
)
def test_other_bindings_and_members_are_not_renamed(before, target):
    text, findings = rewrite(before, target)
    assert "mixed_precision.experimental." in text
    assert "LSO025" not in [f.code for f in findings if f.fixed]


def test_a_name_strict_resolution_decides_is_left_to_the_member_rules():
    findings = assert_rewrites(
        "from tensorflow.keras import mixed_precision\n"
        "mixed_precision.experimental.set_policy('mixed_float16')\n",
        "from tensorflow.keras import mixed_precision\n"
        "mixed_precision.set_global_policy('mixed_float16')\n",
        "keras2",
    )
    assert [f.code for f in findings] == ["LSO004"]


def test_suppressed_at_its_line():
    before = FALLBACK + "mixed_precision.experimental.set_policy(p)  # compat-lso: ignore[LSO025]\n"
    assert_unchanged(before, "keras2")


# keras2, keras3: OpenNMT-tf's `wrapper_class`, bound to the experimental class or the new one.
TWO_WAY = """\
import tensorflow as tf
def wrap(optimizer):
    wrapper_kwargs = {{}}
    if supports_new_api():
        wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer
    else:
        wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer
        wrapper_kwargs = {kwargs}
    if not isinstance(optimizer, wrapper_class):
        optimizer = wrapper_class(optimizer, **wrapper_kwargs)
    return optimizer
"""


@pytest.mark.parametrize("target", ["keras2", "keras3"])
@pytest.mark.parametrize(
    ("kwargs", "emptied"),
    [('dict(loss_scale="dynamic")', "dict()"), ("{'loss_scale': 'dynamic'}", "{}")],
)
def test_a_class_alias_bound_two_ways_becomes_the_new_class_when_every_use_is_followed(
    target, kwargs, emptied
):
    findings = assert_rewrites(
        TWO_WAY.format(kwargs=kwargs),
        TWO_WAY.format(kwargs=emptied).replace("mixed_precision.experimental.", "mixed_precision."),
        target,
    )
    assert manual_codes(findings) == []
    fix = next(f for f in findings if f.code == "LSO025")
    assert (fix.line, fix.fixed) == (7, True)
    assert fix.message.endswith("(two-way alias `wrapper_class`: loss_scale dropped)")
    notes = [(f.line, f.code) for f in findings if f.note]
    # Keras 3's class runs it now, whose dynamic rule differs: said at the call.
    assert notes == ([(10, "LSO022")] if target == "keras3" else [])


@pytest.mark.parametrize("target", ["keras2", "keras3"])
@pytest.mark.parametrize(
    "before",
    [
        pytest.param(TWO_WAY.format(kwargs="dict(loss_scale=128)"), id="a-fixed-scale"),
        pytest.param(
            TWO_WAY.format(kwargs='dict(loss_scale="dynamic")').replace(
                "    return optimizer\n", "    log(wrapper_kwargs)\n    return optimizer\n"
            ),
            id="the-kwargs-read-elsewhere",
        ),
        pytest.param(
            TWO_WAY.format(kwargs="{}").replace(
                "    return optimizer\n", "    return optimizer, wrapper_class\n"
            ),
            id="the-class-handed-on",
        ),
        pytest.param(
            TWO_WAY.format(kwargs="{}").replace(
                "wrapper_class(optimizer, **wrapper_kwargs)", "wrapper_class(optimizer, 'dynamic')"
            ),
            id="a-call-with-the-old-signature",
        ),
    ],
)
def test_a_class_alias_bound_two_ways_is_left_reported_when_a_use_is_not_followed(before, target):
    findings = assert_unchanged(before, target)
    assert "LSO025" not in [f.code for f in findings]
    assert "LSO101" in manual_codes(findings)


def test_an_alias_deleted_after_its_uses_are_rewritten_takes_the_value_rewrite_with_it():
    # Found by test_codemod_properties: the module alias `mp` (bound again in the loop) is read
    # only by `LSO = mp.LossScaleOptimizer`, which LSO001 rewrites away; the bindings' settlement
    # deletes the line whose value LSO025 rewrote, and the two edits overlapped ("internal
    # error: overlapping edits", the file left unchanged).
    before = (
        "import tensorflow as tf\n"
        "mp = tf.keras.mixed_precision.experimental\n"
        "LSO = mp.LossScaleOptimizer\n"
        "for item in LSO(opt, 'dynamic'):\n"
        "    from tensorflow.keras.mixed_precision import experimental as mp\n"
    )
    after = (
        "import compat_lso\n\ncompat_lso.install()\n\n"
        "for item in compat_lso.LossScaleOptimizer(opt):\n"
        "    pass\n"
    )
    assert manual_codes(assert_rewrites(before, after, "shim")) == []


@pytest.mark.parametrize(
    "before, after",
    [
        pytest.param(
            "import tensorflow as tf\n"
            "mp = tf.keras.mixed_precision.experimental\n"
            "x = mp.global_policy().compute_dtype\n"
            "from tensorflow.keras.mixed_precision import experimental as mp\n",
            "import tensorflow as tf\n"
            "mp = tf.keras.mixed_precision\n"
            "x = mp.global_policy().compute_dtype\n",
            id="module-level",
        ),
        pytest.param(
            "import tensorflow as tf\n"
            "if x:\n"
            "    mp = tf.keras.mixed_precision.experimental\n"
            "    mp.set_policy('mixed_float16')\n"
            "from tensorflow.keras.mixed_precision import experimental as mp\n",
            "import compat_lso\nimport tensorflow as tf\n\ncompat_lso.install()\n"
            "if x:\n"
            "    mp = tf.keras.mixed_precision\n"
            "    mp.set_global_policy('mixed_float16')\n",
            id="in-a-branch",
        ),
    ],
)
def test_an_alias_bound_two_ways_and_re_pointed_for_its_uses_is_not_also_a_value(before, after):
    # Found by test_codemod_properties: LSO025 rewrote `mp`'s value to compat_lso.experimental
    # while the bindings re-pointed the same text to tf.keras.mixed_precision for the rename of
    # its uses ("internal error: overlapping edits", the file left unchanged).
    assert manual_codes(assert_rewrites(before, after, "shim")) == []


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_a_kept_module_alias_writes_through_an_import_the_migration_re_points(target):
    # Found by test_codemod_properties: `mp` stays (`mp.unknown_member` is left to the user), so
    # `mp.LossScaleOptimizer` was written through another import only on a second run, once the
    # first had re-pointed `from ...experimental import LossScaleOptimizer`: not idempotent.
    before = (
        "from tensorflow.keras.mixed_precision import experimental as mp\n"
        "x = mp.unknown_member\n"
        "def f():\n"
        "    return isinstance(opt, mp.LossScaleOptimizer)\n"
        "y = LossScaleOptimizer(opt, 'dynamic')\n"
        "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer\n"
    )
    text, _ = rewrite(before, target)
    assert rewrite(text, target)[0] == text, "a second run must change nothing"
    assert "mp.LossScaleOptimizer" not in text
    assert "isinstance(opt, " in text


@pytest.mark.parametrize(
    "before",
    [
        pytest.param(
            "from tensorflow.keras.mixed_precision import experimental as mp\n"
            "x = mp.unknown_member\n"
            "from tensorflow.keras import mixed_precision\n"
            "def inner():\n"
            "    try:\n"
            "        from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
            "    except ImportError:\n"
            "        from tensorflow.keras import mixed_precision\n"
            "    return mp.set_policy('mixed_float16')\n",
            id="shadowed-in-the-function",
        ),
        pytest.param(
            "from tensorflow.keras.mixed_precision import experimental as mp\n"
            "x = mp.unknown_member\n"
            "y = mp.global_policy()\n"
            "from tensorflow.keras import mixed_precision\n",
            id="imported-after-a-module-level-use",
        ),
    ],
)
@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_a_kept_module_alias_does_not_write_through_an_import_the_use_cannot_see(before, target):
    # Found by test_codemod_properties (a second run wrote more): inside `inner` the name is the
    # function's own, unbound once the `try:` import is removed; at module level an import after
    # the use is not bound yet when it runs. The use stays reported.
    text, findings = rewrite(before, target)
    assert rewrite(text, target)[0] == text, "a second run must change nothing"
    assert "mp.set_policy" in text or "mp.global_policy" in text
    assert "mixed_precision.set_global_policy" not in text
    assert "y = mixed_precision.global_policy" not in text
    assert manual_codes(findings)


SHIM_AND_OLD = (
    "from compat_lso import experimental as mp\n"
    "import tensorflow as tf\n"
    "mp = tf.keras.mixed_precision.experimental\n"
)
BOUND_TWO_WAYS = [
    pytest.param(
        SHIM_AND_OLD + "mp.LossScaleOptimizer(opt, 'dynamic').minimize\n",
        "import compat_lso\ncompat_lso.LossScaleOptimizer(opt).minimize\n",
        id="shims-module-first",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "mp = tf.keras.mixed_precision.experimental\n"
        "from compat_lso import experimental as mp\n"
        "mp.LossScaleOptimizer(opt, 'dynamic').minimize\n",
        "import compat_lso\ncompat_lso.LossScaleOptimizer(opt).minimize\n",
        id="old-module-first",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "import compat_lso\n"
        "mp = tf.keras.mixed_precision.experimental\n"
        "mp = compat_lso.experimental\n"
        "mp.LossScaleOptimizer(opt, 128)\n",
        "import compat_lso\ncompat_lso.LossScaleOptimizer(opt, dynamic=False, initial_scale=128)\n",
        id="shims-module-assigned-second",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "import compat_lso\n"
        "def f(opt):\n"
        "    mp = compat_lso.experimental\n"
        "    if opt:\n"
        "        mp = tf.keras.mixed_precision.experimental\n"
        "    return mp.LossScaleOptimizer(opt, 'dynamic')\n",
        "import compat_lso\n"
        "def f(opt):\n"
        "    if opt:\n"
        "        pass\n"
        "    return compat_lso.LossScaleOptimizer(opt)\n",
        id="in-a-function",
    ),
    pytest.param(
        "import compat_lso\n"
        "import tensorflow as tf\n"
        "LSO = compat_lso.experimental.LossScaleOptimizer\n"
        "LSO = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
        "LSO(opt, 'dynamic')\n",
        "import compat_lso\ncompat_lso.LossScaleOptimizer(opt)\n",
        id="the-class",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "mp = tf.keras.mixed_precision.experimental\n"
        "mp = tf.compat.v2.keras.mixed_precision.experimental\n"
        "mp.LossScaleOptimizer(opt, 'dynamic')\n",
        "import compat_lso\ncompat_lso.LossScaleOptimizer(opt)\n",
        id="two-old-spellings",
    ),
]


@pytest.mark.parametrize(("before", "after"), BOUND_TWO_WAYS)
def test_a_name_bound_to_the_shims_module_and_the_old_one_settles_in_one_run(before, after):
    # Found by test_codemod_properties: the first run re-pointed the old binding to
    # compat_lso.experimental, and only a second run then saw `mp` resolve and rewrote the call.
    # On the shim target both bindings are compat_lso.experimental (what LSO025 re-points the old
    # one to), so `mp` resolves at once; compat_lso.experimental.LossScaleOptimizer(opt, 'dynamic')
    # and compat_lso.LossScaleOptimizer(opt) train alike (LSO013, LSO001).
    findings = assert_rewrites(before, after, "shim")
    assert [f.code for f in findings if f.fixed] in (["LSO013"], ["LSO001"])
    assert not manual_codes(findings)


@pytest.mark.parametrize("target", ["keras2", "keras3"])
@pytest.mark.parametrize(("before", "after"), BOUND_TWO_WAYS)
def test_a_name_bound_to_the_shims_module_and_the_old_one_stays_reported_off_the_shim(
    before, after, target
):
    # Off the shim target tf's experimental module is not compat_lso.experimental: `mp` may hold
    # either, and the sweep's findings stay.
    findings = assert_unchanged(before, target)
    assert "LSO101" in manual_codes(findings)


def test_a_name_bound_to_the_shims_module_and_the_old_one_passed_on_is_re_pointed():
    before = SHIM_AND_OLD + "use(mp)\n"
    after = (
        "from compat_lso import experimental as mp\n"
        "import compat_lso\n\n"
        "compat_lso.install()\n\n"
        "mp = compat_lso.experimental\n"
        "use(mp)\n"
    )
    (fix,) = assert_rewrites(before, after, "shim")
    assert fix.code == "LSO025" and fix.fixed
    assert fix.message.endswith("(`mp` is bound more than one way; compat_lso.install() added)")


@pytest.mark.parametrize("target", ["keras2", "keras3"])
def test_a_name_bound_to_the_shims_module_and_the_old_one_passed_on_stays_reported(target):
    assert manual_codes(assert_unchanged(SHIM_AND_OLD + "use(mp)\n", target)) == [
        "LSO101",
        "LSO102",
    ]


def test_a_member_the_shim_lacks_read_through_a_name_bound_both_ways_stays_reported():
    # `mp` resolves to compat_lso.experimental for the rules only: if it holds tf's module, the
    # read breaks, and the sweep (which sees `mp` bound more than one way) reports it.
    findings = assert_unchanged(SHIM_AND_OLD + "mp.NotInShim(opt)\n", "shim")
    assert manual_codes(findings) == ["LSO101", "LSO102"]
    assert next(f for f in findings if f.code == "LSO102").line == 4
