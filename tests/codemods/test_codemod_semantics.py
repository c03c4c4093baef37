"""Semantics on real TensorFlow: old code and migrated code build equal optimizers.

The "before" side runs the old constructor that TensorFlow itself still ships in its internal legacy
Keras copy (`tensorflow.python.keras.mixed_precision.loss_scale_optimizer.LossScaleOptimizerV1`,
with the old `tf.mixed_precision.experimental` loss scales served by `tf.compat.v1`), so the
reference is TensorFlow's own translation of `loss_scale`. The "after" side is the migrated code,
run as written on the installed tf.keras, with no shim. Compared: the loss-scaling part of
`get_config()` and isinstance results. The shim target's output is run the same way, with
`compat_lso` as it is (no install()), including what it keeps on `compat_lso.experimental`.

With `compat_lso.install()` (the shim's old-code support), every LSO001 rewrite case of the rule
tests runs as written on the installed shim and is compared with its migration to this
environment's Keras and to the shim, run with nothing installed.
"""

from __future__ import annotations

import textwrap

import pytest

tf = pytest.importorskip("tensorflow")

import compat_lso  # noqa: E402
from codemods.apply.engine import migrate  # noqa: E402
from codemods.table import Target  # noqa: E402
from compat_lso import _backend  # noqa: E402

# Keras 2 (tf.keras 2.x, tf_keras) still has the manual-scaling methods; Keras 3 dropped them.
KERAS_MAJOR = 2 if hasattr(tf.keras.mixed_precision.LossScaleOptimizer, "get_scaled_loss") else 3
TARGET: Target = "keras2" if KERAS_MAJOR == 2 else "keras3"
LOSS_SCALE_KEYS = ("dynamic", "initial_scale", "dynamic_growth_steps")

# The old constructor, called; each case passes its own arguments.
OLD_CALL = "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer("
CASES = {
    "dynamic-string": OLD_CALL + "tf.keras.optimizers.SGD(), 'dynamic')",
    "fixed-number": OLD_CALL + "tf.keras.optimizers.SGD(), loss_scale=123)",
    "fixed-loss-scale": OLD_CALL
    + "\n    optimizer=tf.keras.optimizers.SGD(), "
    + "loss_scale=tf.mixed_precision.experimental.FixedLossScale(64))",
    "dynamic-keywords": OLD_CALL
    + "tf.keras.optimizers.SGD(), "
    + "tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=2048, "
    + "increment_period=500))",
    "dynamic-positional": OLD_CALL
    + "tf.keras.optimizers.SGD(), tf.train.experimental.DynamicLossScale(2**15, 1000, 2.0))",
    "dynamic-defaults": OLD_CALL
    + "tf.keras.optimizers.SGD(), tf.compat.v1.mixed_precision.DynamicLossScale())",
    "dynamic-bound-once": "scale = tf.mixed_precision.experimental.DynamicLossScale("
    + "initial_loss_scale=4, increment_period=3)\n"
    + OLD_CALL
    + "tf.keras.optimizers.SGD(), scale)",
    # Arguments only known at run time move as written into initial_scale/dynamic_growth_steps.
    "dynamic-expressions": "init, steps = 2 ** 9, 7\n"
    + OLD_CALL
    + "tf.keras.optimizers.SGD(), tf.mixed_precision.experimental.DynamicLossScale("
    + "increment_period=steps, initial_loss_scale=float(init), multiplier=2.0))",
    # OpenNMT-tf's feature detection: the class and its kwargs bound two ways (LSO025).
    "two-way-alias": "if True:\n"
    "    wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
    "    wrapper_kwargs = dict(loss_scale='dynamic')\n"
    "else:\n"
    "    wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer\n"
    "    wrapper_kwargs = {}\n"
    "opt = wrapper_class(tf.keras.optimizers.SGD(), **wrapper_kwargs)",
}
# Keras 3 has no fixed LossScaleOptimizer: there the scale is the inner optimizer's
# loss_scale_factor (LSO001 takes LSO015's path; tests/codemods/test_codemod_semantics_tf24.py
# trains with it).
FIXED = {"fixed-number", "fixed-loss-scale"}


class _Legacy:
    """`tf` as TF 2.3 code saw it: attribute paths overridden, everything else the real module."""

    def __init__(self, real, overrides, path=""):
        self._real, self._overrides, self._path = real, overrides, path

    def __getattr__(self, name):
        full = f"{self._path}.{name}" if self._path else name
        if full in self._overrides:
            return self._overrides[full]
        if any(key.startswith(full + ".") for key in self._overrides):
            return _Legacy(getattr(self._real, name, None), self._overrides, full)
        return getattr(self._real, name)


def _legacy_tf():
    from tensorflow.python.keras.mixed_precision import loss_scale_optimizer
    from tensorflow.python.keras.optimizer_v2 import gradient_descent

    v1 = tf.compat.v1.mixed_precision
    classes = {
        name: getattr(v1, name) for name in ("LossScale", "FixedLossScale", "DynamicLossScale")
    }
    return _Legacy(
        tf,
        {
            "keras.mixed_precision.experimental.LossScaleOptimizer": (
                loss_scale_optimizer.LossScaleOptimizerV1
            ),
            "keras.optimizers.SGD": gradient_descent.SGD,
            **{f"mixed_precision.experimental.{n}": c for n, c in classes.items()},
            **{f"train.experimental.{n}": c for n, c in classes.items()},
        },
    )


def _run(code: str, namespace: dict) -> dict:
    exec(compile(code, "<case>", "exec"), namespace)
    return namespace


def _loss_scale_config(optimizer) -> dict:
    config = optimizer.get_config()
    return {key: config.get(key) for key in LOSS_SCALE_KEYS if key in config}


@pytest.fixture(scope="module")
def legacy_tf():
    return _legacy_tf()


@pytest.mark.parametrize("name", sorted(CASES))
def test_migrated_constructor_builds_the_same_loss_scaling(name, legacy_tf):
    before = CASES[name]
    result = migrate("import tensorflow as tf\n" + before + "\n", TARGET)
    assert "experimental" not in result.text
    old = _run(before, {"tf": legacy_tf})["opt"]
    new = _run(result.text, {})["opt"]
    if TARGET == "keras3" and name in FIXED:
        assert not isinstance(new, tf.keras.mixed_precision.LossScaleOptimizer)
        assert new.loss_scale_factor == _loss_scale_config(old)["initial_scale"]
        assert _loss_scale_config(old)["dynamic"] is False
        return
    expected = _loss_scale_config(old)
    if TARGET == "keras3":  # no `dynamic` key: every Keras 3 loss scale optimizer is dynamic
        assert expected.pop("dynamic") is True
    assert _loss_scale_config(new) == expected


# A loss_scale only known at run time: keras2 converts it where the code runs (LSO001).
_MAKE = "def make(optimizer, loss_scale):\n    return " + OLD_CALL[6:] + "optimizer, loss_scale)\n"
RUNTIME_CASES = {
    "run-time-dynamic": _MAKE + "opt = make(tf.keras.optimizers.SGD(), 'dynamic')",
    "run-time-fixed-int": _MAKE + "opt = make(tf.keras.optimizers.SGD(), 128)",
    "run-time-fixed-float": _MAKE + "opt = make(tf.keras.optimizers.SGD(), 1000.0)",
    "run-time-flags-attribute": "class FLAGS:\n    loss_scale = 2.0 ** 10\n"
    + OLD_CALL
    + "tf.keras.optimizers.SGD(), loss_scale=FLAGS.loss_scale)",
}


@pytest.mark.skipif(
    KERAS_MAJOR != 2, reason="keras2's run-time conversion; keras3's is the test below"
)
@pytest.mark.parametrize("name", sorted(RUNTIME_CASES))
def test_a_run_time_loss_scale_converted_on_keras2_builds_the_same_loss_scaling(name, legacy_tf):
    before = RUNTIME_CASES[name]
    result = migrate("import tensorflow as tf\n" + before + "\n", "keras2")
    assert "experimental" not in result.text
    assert [f.code for f in result.findings if not f.fixed] == []
    old = _run(before, {"tf": legacy_tf})["opt"]
    new = _run(result.text, {})["opt"]
    assert _loss_scale_config(new) == _loss_scale_config(old)


@pytest.mark.skipif(
    KERAS_MAJOR != 3, reason="keras3 picks the class where the code runs; keras2's is above"
)
@pytest.mark.parametrize("scale", ["'dynamic'", "128", "1000.0"])
def test_a_run_time_loss_scale_converted_on_keras3_builds_the_same_loss_scaling(scale, legacy_tf):
    before = (
        f"class FLAGS:\n    loss_scale = {scale}\n"
        + OLD_CALL
        + "tf.keras.optimizers.SGD(), loss_scale=FLAGS.loss_scale)"
    )
    result = migrate("import tensorflow as tf\n" + before + "\n", "keras3")
    assert [f.code for f in result.findings if not f.fixed] == []
    expected = _loss_scale_config(_run(before, {"tf": legacy_tf})["opt"])
    new = _run(result.text, {})["opt"]
    if expected.pop("dynamic"):  # Keras 3's class, always dynamic: same start and growth period
        assert isinstance(new, tf.keras.mixed_precision.LossScaleOptimizer)
        assert _loss_scale_config(new) == expected
    else:  # the fixed scale is the inner optimizer's loss_scale_factor (LSO001, LSO015)
        assert not isinstance(new, tf.keras.mixed_precision.LossScaleOptimizer)
        assert new.loss_scale_factor == expected["initial_scale"]


def test_isinstance_check_accepts_the_migrated_optimizer(legacy_tf):
    check = "ok = isinstance(opt, tf.keras.mixed_precision.experimental.LossScaleOptimizer)"
    old = _run(CASES["dynamic-string"] + "\n" + check, {"tf": legacy_tf})
    migrated = migrate(
        "import tensorflow as tf\n" + CASES["dynamic-string"] + "\n" + check + "\n", TARGET
    ).text
    new = _run(migrated, {})
    assert old["ok"] is True and new["ok"] is True
    assert isinstance(new["opt"], tf.keras.mixed_precision.LossScaleOptimizer)


def _constructor_line(source: str) -> int:
    """The line of the (first) experimental LossScaleOptimizer call in a case."""
    lines = source.splitlines()
    return next(i for i, line in enumerate(lines, 1) if "LossScaleOptimizer(" in line)


def _built(namespace: dict):
    """The optimizer a case builds: `opt`, or what its `build(opt)` function returns."""
    if callable(namespace.get("build")):
        return namespace["build"](tf.keras.optimizers.SGD())
    return namespace["opt"]


def _rewrite_cases():
    from tests.codemods.test_codemod_lso001_loss_scale_optimizer_call import REWRITES_KERAS2

    return [
        pytest.param(case.values[0], target, id=f"{case.id}-{target}")
        for case in REWRITES_KERAS2
        for target in ("native", "shim")
    ]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the old code is deprecated by design
@pytest.mark.parametrize(("before", "target"), _rewrite_cases())
def test_every_rewrite_case_old_code_on_install_vs_migrated_code(before, target):
    """Each LSO001 rewrite case: the original runs on `compat_lso.install()`, the migrated code
    (to this environment's Keras, or to the shim) runs with nothing installed."""
    target = TARGET if target == "native" else target
    before = textwrap.dedent(before)
    result = migrate(before, target)
    reported = [f for f in result.findings if not f.fixed]
    setup = "import tensorflow as tf\nopt = tf.keras.optimizers.SGD()\nsgd = opt\n"
    compat_lso.install()
    try:
        try:
            old = _built(_run(setup + before, {}))
        except (ImportError, AttributeError) as error:
            # Standalone `keras` under TF_USE_LEGACY_KERAS=1 is Keras 3 while the shim serves
            # tf_keras, so install() leaves `keras.mixed_precision.experimental` out there.
            if (
                "keras.mixed_precision" in before
                and _backend.keras_package().__name__ == "tf_keras"
            ):
                pytest.skip(f"standalone keras is not the package behind tf.keras here: {error}")
            raise
    finally:
        compat_lso.uninstall()
    expected = _loss_scale_config(old)
    if reported:
        # Only a fixed loss scale on Keras 3 is left to the user: reported at the constructor,
        # the file left as it was (nothing half-migrated), and the report is needed, since the
        # code as left fails without the shim.
        assert target == "keras3" and expected["dynamic"] is False, (target, reported)
        assert [(f.code, f.line) for f in reported] == [("LSO001", _constructor_line(before))]
        assert "Keras 3 has no fixed LossScaleOptimizer" in reported[0].message
        assert result.text == before
        with pytest.raises(AttributeError, match="experimental"):
            _built(_run(setup + result.text, {}))
        return
    new = _built(_run(setup + result.text, {}))
    actual = _loss_scale_config(new)
    if "dynamic" not in actual:  # Keras 3's own class: always dynamic
        assert expected.pop("dynamic") is True
    assert actual == expected
    assert isinstance(old, tf.keras.mixed_precision.LossScaleOptimizer)
    assert isinstance(new, tf.keras.mixed_precision.LossScaleOptimizer)


SHIM_RUNTIME_CASES = {
    # Not translatable statically: the shim target keeps these on compat_lso.experimental.
    "runtime-variable": "scale = make_scale()\n" + OLD_CALL + "tf.keras.optimizers.SGD(), scale)",
    "runtime-multiplier": "two = 2.0\n"
    + OLD_CALL
    + "tf.keras.optimizers.SGD(), tf.mixed_precision.experimental.DynamicLossScale("
    + "initial_loss_scale=float(2 ** 9), increment_period=7, multiplier=two))",
}


@pytest.mark.parametrize("name", sorted(CASES) + sorted(SHIM_RUNTIME_CASES))
def test_shim_target_runs_with_no_install_and_matches(name, legacy_tf):
    """The shim target's output runs on whatever tf.keras is installed, as written (no install)."""
    before = CASES.get(name) or SHIM_RUNTIME_CASES[name]
    result = migrate("import tensorflow as tf\n" + before + "\n", "shim")
    assert "tf.keras.mixed_precision.experimental" not in result.text
    make_scale = "def make_scale():\n    return {dls}(initial_loss_scale=64, increment_period=5)\n"
    old = _run(
        make_scale.format(dls="tf.mixed_precision.experimental.DynamicLossScale") + before,
        {"tf": legacy_tf},
    )["opt"]
    migrated = make_scale.format(dls="compat_lso.experimental.DynamicLossScale") + result.text
    # Kept on the experimental class, which says what to replace it with (the two-way alias: LSO025
    # keeps it as the user wrote it, on compat_lso.experimental).
    if name in SHIM_RUNTIME_CASES or name == "two-way-alias":
        with pytest.warns(DeprecationWarning, match="compat_lso.experimental.LossScaleOptimizer"):
            new = _run(migrated, {"compat_lso": compat_lso})["opt"]
    else:
        new = _run(migrated, {"compat_lso": compat_lso})["opt"]
    assert _loss_scale_config(new) == _loss_scale_config(old)
    assert isinstance(new, compat_lso.LossScaleOptimizer)


# Issue 38, item 1: a Policy's loss scale that no compile() reads (the optimizer both get is
# already a loss scale optimizer, built in a class __init__) is dropped; training keeps every
# number. The data overflow float16 at the dynamic scale (2**15 * 16) but not at 1024, so the
# old help (`LossScaleOptimizer(opt, initial_scale=1024)`) would apply the first step that TF
# 2.4-2.15 skipped.
DEAD_POLICY_LOSS_SCALE = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

policy = mixed_precision.Policy("mixed_float16", loss_scale=1024)
mixed_precision.set_policy(policy)


class Trainer:
    def __init__(self):
        opt = tf.keras.optimizers.SGD(0.01)
        self.optimizer = mixed_precision.LossScaleOptimizer(opt, loss_scale="dynamic")
        dense = tf.keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros")
        self.model = tf.keras.Sequential([tf.keras.Input((1,)), dense])
        self.model.compile(optimizer=self.optimizer, loss="mse")


trainer = Trainer()
weights = []
for _ in range(7):
    trainer.model.train_on_batch(np.ones((1, 1), "float32"), np.full((1, 1), 8.0, "float32"))
    weights.append(float(trainer.model.layers[0].kernel.numpy()[0, 0]))
mixed_precision.set_policy("float32")
"""
# TF 2.4-2.15's spelling of the same program (what the old one did: the policy's loss scale never
# reached compile()), run natively where tf.keras is Keras 2.
DEAD_POLICY_TWIN = (
    DEAD_POLICY_LOSS_SCALE.replace(
        "from tensorflow.keras.mixed_precision import experimental as mixed_precision",
        "from tensorflow.keras import mixed_precision",
    )
    .replace('Policy("mixed_float16", loss_scale=1024)', 'Policy("mixed_float16")')
    .replace("set_policy(", "set_global_policy(")
    .replace('LossScaleOptimizer(opt, loss_scale="dynamic")', "LossScaleOptimizer(opt)")
)


def _weights(code: str) -> list[float]:
    try:
        return _run(code, {})["weights"]
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_policy_loss_scale_no_compile_reads_is_dropped_and_training_keeps_every_number():
    compat_lso.install()  # the old code, as written, with TF 2.4's meaning
    try:
        old = _weights(DEAD_POLICY_LOSS_SCALE)
    finally:
        compat_lso.uninstall()
    assert old[:4] == [0.0] * 4 and old[4] != 0.0, "steps 1-4 overflow at 2**15 ... 2**12"
    if KERAS_MAJOR == 2:  # the independent reference: TF 2.15's own classes
        assert _weights(DEAD_POLICY_TWIN) == old
    for target in (TARGET, "shim"):
        result = migrate(DEAD_POLICY_LOSS_SCALE, target)
        assert "1024" not in result.text and "experimental" not in result.text
        assert [f.code for f in result.findings if f.note and f.code == "LSO006"] == ["LSO006"]
        assert _weights(result.text) == old, target  # Keras 3's rule agrees on these 7 steps
    # What the old help proposed changes the numbers at step 1: the test can tell.
    followed = DEAD_POLICY_TWIN.replace(
        "LossScaleOptimizer(opt)", "LossScaleOptimizer(opt, initial_scale=1024)"
    )
    assert _weights(followed)[0] != old[0]


# Issue 39, case 5: TensorFlow's TF1 graph rewrite function given a Keras optimizer refuses it on
# every TensorFlow from 2.11 (TF 2.15 and 2.21 here); the migration runs and gives what TF 2.4-2.10
# gave: Keras's LossScaleOptimizer (dynamic, from 2**15) and grappler's pass on.
TF1_GRAPH_REWRITE = """\
import tensorflow as tf
opt = tf.keras.optimizers.SGD(0.1)
opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
"""


def test_the_tf1_graph_rewrite_given_a_keras_optimizer_raises_and_its_migration_runs():
    with pytest.raises(ValueError, match=r"must be an instance of a tf\.train\.Optimizer"):
        _run(TF1_GRAPH_REWRITE, {})
    try:
        opt = _run(migrate(TF1_GRAPH_REWRITE, TARGET).text, {})["opt"]
        assert isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)
        assert _loss_scale_config(opt)["initial_scale"] == 2**15
        assert tf.config.optimizer.get_experimental_options()["auto_mixed_precision"] is True
    finally:
        tf.config.optimizer.set_experimental_options({"auto_mixed_precision": False})
