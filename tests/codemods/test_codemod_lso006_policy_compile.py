"""LSO006 on real TensorFlow: the loss scale is dropped exactly where compile wraps the same.

The reference for the old behaviour is TensorFlow's own copy of Keras 2.4-2.8
(`tensorflow.python.keras`, still shipped in TF 2.15 and 2.21), whose `Model._get_optimizer` wraps
the optimizer with the loss scale of an experimental Policy (PolicyV1). Each case compiles a model
under the old `PolicyV1(name, loss_scale)`, and under what the codemod writes for keras2 (the new
`Policy(name)`), both in that Keras (TF 2.4-2.8's behaviour) and in the installed tf.keras (Keras
2.15 or Keras 3), and compares the loss scaling each compile gives the optimizer. The codemod must
drop the argument when, and only when, all of them agree.
"""

from __future__ import annotations

import pytest

tf = pytest.importorskip("tensorflow")
legacy_policy = pytest.importorskip(
    "tensorflow.python.keras.mixed_precision.policy",
    reason="this TensorFlow no longer ships its copy of Keras 2.4-2.8 (the PolicyV1 reference)",
)

from tensorflow.python.keras import layers as legacy_layers  # noqa: E402
from tensorflow.python.keras import models as legacy_models  # noqa: E402
from tensorflow.python.keras.optimizer_v2 import gradient_descent  # noqa: E402

from codemods.apply.engine import migrate  # noqa: E402

CASES = [
    ("mixed_float16", "'dynamic'"),
    ("mixed_float16", "'auto'"),
    ("float16", "'auto'"),
    ("float32", "'auto'"),
    ("float32", "None"),
    ("mixed_bfloat16", "None"),
    ("float16", "'dynamic'"),
    ("mixed_float16", "None"),
    ("mixed_float16", "128"),
    ("mixed_float16", "tf.compat.v1.mixed_precision.DynamicLossScale()"),
    ("mixed_float16", "tf.compat.v1.mixed_precision.DynamicLossScale(2**15, 2000)"),
    ("mixed_float16", "tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale=4096)"),
    ("mixed_float16", "tf.compat.v1.mixed_precision.FixedLossScale(128)"),
    ("float16", "tf.compat.v1.mixed_precision.DynamicLossScale()"),
]


def _scaling(optimizer) -> tuple | None:
    """The loss scaling compile gave the optimizer: None, or (dynamic, initial, growth steps)."""
    if not hasattr(optimizer, "inner_optimizer"):
        return None
    config = optimizer.get_config()
    return (  # Keras 3's class has no `dynamic`: it is always dynamic
        config.get("dynamic", True),
        float(config["initial_scale"]),
        config.get("dynamic_growth_steps") if config.get("dynamic", True) else None,
    )


def _legacy_compile(policy) -> tuple | None:
    legacy_policy.set_global_policy(policy)
    try:
        model = legacy_models.Sequential([legacy_layers.Dense(2, input_shape=(3,))])
        model.compile(optimizer=gradient_descent.SGD(), loss="mse")
    finally:
        legacy_policy.set_global_policy("float32")
    return _scaling(model.optimizer)


def _compile(policy) -> tuple | None:
    tf.keras.mixed_precision.set_global_policy(policy)
    try:
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
        model.compile(optimizer=tf.keras.optimizers.SGD(), loss="mse")
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    return _scaling(model.optimizer)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(("name", "loss_scale"), CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_dropped_exactly_where_compile_wraps_the_same(name, loss_scale):
    before = f"p = tf.keras.mixed_precision.experimental.Policy({name!r}, loss_scale={loss_scale})"
    result = migrate(f"import tensorflow as tf\n{before}\n", "keras2")
    dropped = not any(f.code == "LSO006" and not f.fixed for f in result.findings)

    old = _legacy_compile(legacy_policy.PolicyV1(name, loss_scale=eval(loss_scale, {"tf": tf})))
    # What the keras2 output means on TF 2.4-2.8, and on the installed tf.keras (run as written).
    new_on_tf24 = _legacy_compile(legacy_policy.Policy(name))
    namespace: dict = {}
    if dropped:
        assert (
            result.text
            == f"import tensorflow as tf\np = tf.keras.mixed_precision.Policy({name!r})\n"
        )
        exec(compile(result.text, "<migrated>", "exec"), namespace)
        new = _compile(namespace["p"])
    else:
        new = _compile(tf.keras.mixed_precision.Policy(name))
    assert dropped == (old == new_on_tf24 == new), (old, new_on_tf24, new)


def _old_source(name: str, loss_scale: str) -> str:
    return f"p = tf.keras.mixed_precision.experimental.Policy({name!r}, loss_scale={loss_scale})"


# The cases whose loss scale the codemod keeps on compat_lso.experimental.Policy (--target shim).
KEPT_ON_SHIM = [
    (name, loss_scale)
    for name, loss_scale in CASES
    if "compat_lso.experimental.Policy("
    in migrate(f"import tensorflow as tf\n{_old_source(name, loss_scale)}\n", "shim").text
]


def test_the_shim_keeps_what_keras2_reports():
    assert len(KEPT_ON_SHIM) == 6


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(
    ("name", "loss_scale"), KEPT_ON_SHIM, ids=[f"{n}-{s}" for n, s in KEPT_ON_SHIM]
)
def test_shim_keeps_the_loss_scale_compile_applies_once_installed(name, loss_scale):
    import compat_lso

    result = migrate(f"import tensorflow as tf\n{_old_source(name, loss_scale)}\n", "shim")
    old = _legacy_compile(legacy_policy.PolicyV1(name, loss_scale=eval(loss_scale, {"tf": tf})))
    namespace: dict = {}
    exec(compile(result.text, "<migrated>", "exec"), namespace)  # runs with nothing installed
    compat_lso.install()
    try:
        assert _compile(namespace["p"]) == old
    finally:
        compat_lso.uninstall()
