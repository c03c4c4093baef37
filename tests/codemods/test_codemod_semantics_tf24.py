"""Semantics on real TensorFlow of the TF 2.4-2.15 rules (LSO011, LSO015-LSO017).

TF 2.4-2.15-style scripts on the non-experimental class, each recording what it trained:

- on Keras 2 (tf215, tf221-tfkeras) the scripts run as written, natively, and must give the
  numbers worked out by hand below from Keras 2's rule (FACTS of the project: a finite step
  counts, at `dynamic_growth_steps` the scale doubles if the result is finite; a non-finite step
  is skipped, halves the scale but never below 1, and still advances `iterations`);
- migrated with `--target shim`, they run on every backend, with no install(), and must give the
  same hand-computed numbers;
- migrated with `--target keras3` (TF 2.21 only), they run on Keras 3's own classes with no shim.
  Where Keras 3's rule differs by design, the expected Keras 3 numbers are worked out by hand
  here too, and the test states the difference (no floor at 1, doubling to inf, skipped steps not
  counted in `iterations`);
- training through `Model.fit` / a custom `train_step` is compared with the same training with no
  loss scaling at all: with power-of-two scales and small integer data the scaling is exact, so
  the weights must be equal bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from codemods.apply.engine import migrate  # noqa: E402

KERAS_MAJOR = 2 if hasattr(tf.keras.mixed_precision.LossScaleOptimizer, "get_scaled_loss") else 3
keras3_only = pytest.mark.skipif(KERAS_MAJOR != 3, reason="--target keras3 output needs Keras 3")
keras2_only = pytest.mark.skipif(
    KERAS_MAJOR != 2, reason="TF 2.4-2.15 code runs natively only where tf.keras is Keras 2"
)

# A custom loop with the manual pattern inside tf.function, TF 2.4 positional arguments, and the
# state read after every step.
CUSTOM_LOOP = """\
import tensorflow as tf

opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), True, {args})
w = tf.Variable(10.0)
trace = []


@tf.function
def train_step(g):
    with tf.GradientTape() as tape:
        loss = w * g
        scaled_loss = opt.get_scaled_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, [w])
    grads = opt.get_unscaled_gradients(scaled_grads)
    opt.apply_gradients(zip(grads, [w]))


for g in GRADIENTS:
    train_step(tf.constant(float(g)))
    trace.append(
        (float(opt.loss_scale), int(opt.dynamic_counter), int(opt.iterations), float(w.numpy()))
    )
"""
INF, NAN = math.inf, math.nan

# name: (initial_scale, growth_steps), gradients, Keras 2 trace, Keras 3 trace
# trace entries: (loss scale, counter, iterations, w) after each step.
Trace = list[tuple[float, int, int, float]]
TRAJECTORIES: dict[str, tuple[tuple[float, int], list[float], Trace, Trace]] = {
    # The project's reference trajectory: the same scales and counters on both; Keras 3 does not
    # count the two skipped steps in `iterations`.
    "inf-and-nan": (
        (4, 3),
        [1, 1, 1, 1, INF, NAN, 1],
        [
            (4, 1, 1, 9),
            (4, 2, 2, 8),
            (8, 0, 3, 7),
            (8, 1, 4, 6),
            (4, 0, 5, 6),
            (2, 0, 6, 6),
            (2, 1, 7, 5),
        ],
        [
            (4, 1, 1, 9),
            (4, 2, 2, 8),
            (8, 0, 3, 7),
            (8, 1, 4, 6),
            (4, 0, 4, 6),
            (2, 0, 4, 6),
            (2, 1, 5, 5),
        ],
    ),
    # Keras 2 stops halving at 1; Keras 3 goes on to 0.5, 0.25.
    "floor-at-1": (
        (1, 1000),
        [INF, INF, 1],
        [(1, 0, 1, 10), (1, 0, 2, 10), (1, 1, 3, 9)],
        [(0.5, 0, 0, 10), (0.25, 0, 0, 10), (0.25, 1, 1, 9)],
    ),
    # Keras 2 never doubles to inf; Keras 3 does (and would then skip every step, as
    # inf * 0.5 = inf). The second gradient is 0 so that no step unscales by 2**-127, a subnormal
    # that TensorFlow may flush to zero.
    "growth-to-inf": (
        (2.0**126, 1),
        [1, 0],
        [(2.0**127, 0, 1, 9), (2.0**127, 0, 2, 9)],
        [(2.0**127, 0, 1, 9), (INF, 0, 2, 9)],
    ),
}


def _script(name: str) -> str:
    (initial, growth), _, _, _ = TRAJECTORIES[name]
    return CUSTOM_LOOP.format(args=f"{initial!r}, {growth}")


def _run(code: str, **namespace):
    exec(compile(code, "<migrated>", "exec"), namespace)
    return namespace


def _migrated(code: str, target: str) -> str:
    result = migrate(code, target)  # type: ignore[arg-type]
    manual = [f for f in result.findings if not f.fixed]
    assert not manual, manual
    return result.text


@pytest.fixture(autouse=True)
def _float32_policy():
    yield
    tf.keras.mixed_precision.set_global_policy("float32")


@keras2_only
@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_hand_computed_keras2_trajectory_is_what_keras2_does(name):
    """The reference numbers themselves, against real Keras 2 running the script as written."""
    _, gradients, keras2, _ = TRAJECTORIES[name]
    assert _run(_script(name), GRADIENTS=gradients)["trace"] == keras2


@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_shim_target_keeps_the_tf24_trajectory_on_every_backend(name):
    _, gradients, keras2, _ = TRAJECTORIES[name]
    text = _migrated(_script(name), "shim")
    assert "compat_lso.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), True," in text
    assert _run(text, GRADIENTS=gradients)["trace"] == keras2


@keras3_only
@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_keras3_target_runs_with_no_shim_and_differs_only_by_design(name):
    _, gradients, keras2, keras3 = TRAJECTORIES[name]
    text = _migrated(_script(name), "keras3")
    assert "compat_lso" not in text and "get_scaled_loss" not in text
    assert "opt.scale_loss(loss)" in text and "grads = scaled_grads" in text
    assert _run(text, GRADIENTS=gradients)["trace"] == keras3
    # The difference, stated: the same weights; the scales and iterations differ as listed above.
    assert [step[3] for step in keras3] == [step[3] for step in keras2]
    assert keras3 != keras2


# The same loop with each Keras 2 member behind a feature test, as real code guards them.
GUARDED_LOOP = (
    CUSTOM_LOOP.replace(
        "        scaled_loss = opt.get_scaled_loss(loss)\n",
        "        scaled_loss = loss\n        if hasattr(opt, 'get_scaled_loss'):\n"
        "            scaled_loss = opt.get_scaled_loss(loss)\n",
    )
    .replace(
        "    grads = opt.get_unscaled_gradients(scaled_grads)\n",
        "    grads = scaled_grads\n    if hasattr(opt, 'get_unscaled_gradients'):\n"
        "        grads = opt.get_unscaled_gradients(grads)\n",
    )
    .replace(
        "int(opt.dynamic_counter)",
        "int(opt.dynamic_counter) if hasattr(opt, 'dynamic_counter') else -1",
    )
    .format(args="4, 3")
)


@pytest.mark.parametrize("target", [pytest.param("keras3", marks=keras3_only), None])
def test_guarded_members_keep_their_trajectory(target):
    """Keras 2 runs the guarded loop as the plain one; migrated to keras3, the guards follow the
    rewrite (an unfollowed guard is always False there: unscaled loss, counter -1)."""
    _, gradients, keras2, keras3 = TRAJECTORIES["inf-and-nan"]
    if target is None:
        if KERAS_MAJOR != 2:
            pytest.skip("TF 2.4-2.15 code runs natively only where tf.keras is Keras 2")
        assert _run(GUARDED_LOOP, GRADIENTS=gradients)["trace"] == keras2
        return
    text = _migrated(GUARDED_LOOP, "keras3")
    assert "hasattr(opt, 'scale_loss')" in text
    assert _run(text, GRADIENTS=gradients)["trace"] == keras3


@keras3_only
def test_unmigrated_tf24_positional_call_is_misread_by_keras3():
    """Why LSO015 exists: Keras 3 reads `(opt, True, 4, 3)` as initial_scale=True, ..."""
    with pytest.raises(Exception):  # noqa: B017 (Keras 3 raises on name=3; the point is no run)
        _run(_script("inf-and-nan"), GRADIENTS=[1.0])


# -- Model.fit with a fixed loss scale under mixed_float16 ----------------------------------------

FIXED_FIT = """\
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential(
    [tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")]
)
sgd = tf.keras.optimizers.SGD
model.compile(
    optimizer=tf.keras.mixed_precision.LossScaleOptimizer(sgd(2**-6), False, 128),
    loss="mse",
)
model.fit(X, Y, batch_size=2, epochs=3, shuffle=False, verbose=0)
"""
# The same training with no loss scaling at all (the reference).
PLAIN_FIT = FIXED_FIT.replace(
    "tf.keras.mixed_precision.LossScaleOptimizer(sgd(2**-6), False, 128)",
    "sgd(2**-6)",
)
# Small enough that even a 2**15 scale (what Keras 2's compile() wraps a plain optimizer in under
# 'mixed_float16') overflows no float16 gradient, and every value is a short binary fraction: any
# power-of-two loss scale then changes no bit of the weights.
X = np.array([[0.5, 1.0], [1.0, 0.5]], dtype="float32")
Y = np.array([[1.25], [1.25]], dtype="float32")


def _weights(namespace) -> list:
    return [w.numpy().tolist() for w in namespace["model"].weights]


def _plain() -> list:
    source = PLAIN_FIT
    if KERAS_MAJOR == 3:  # no loss scaling at all (Keras 2 wraps it; exact, see X and Y)
        source = source.replace('loss="mse",', 'loss="mse", auto_scale_loss=False,')
    weights = _weights(_run(source, X=X, Y=Y))
    assert weights != [[[1.0], [1.0]], [0.0]], "the reference must have trained"
    return weights


@keras3_only
def test_keras3_fixed_scale_is_the_inner_optimizers_loss_scale_factor_and_trains_alike():
    text = _migrated(FIXED_FIT, "keras3")
    assert "sgd(2**-6, loss_scale_factor=128)" in text
    assert "auto_scale_loss=False" in text
    namespace = _run(text, X=X, Y=Y)
    optimizer = namespace["model"].optimizer
    assert not isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
    assert optimizer.loss_scale_factor == 128
    assert float(optimizer.scale_loss(tf.constant(1.0))) == 128.0
    assert _weights(namespace) == _plain()


@keras3_only
def test_keras3_would_drop_the_fixed_scale_without_auto_scale_loss_false():
    """Why the rewrite adds auto_scale_loss=False: compile() wraps and sets the factor to None."""
    text = _migrated(FIXED_FIT, "keras3").replace(", auto_scale_loss=False", "")
    optimizer = _run(text, X=X, Y=Y)["model"].optimizer
    assert isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
    assert optimizer.inner_optimizer.loss_scale_factor is None


def test_shim_fixed_scale_fit_trains_like_no_scaling():
    namespace = _run(_migrated(FIXED_FIT, "shim"), X=X, Y=Y)
    assert namespace["model"].optimizer.dynamic is False
    assert float(namespace["model"].optimizer.loss_scale) == 128.0
    assert _weights(namespace) == _plain()


@keras2_only
def test_native_fixed_scale_fit_trains_like_no_scaling():
    assert _weights(_run(FIXED_FIT, X=X, Y=Y)) == _plain()


# -- A custom train_step on self.optimizer ---------------------------------------------------------

TRAIN_STEP = """\
import tensorflow as tf


class Linear(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1, kernel_initializer="ones")

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
            scaled_loss = self.optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, self.trainable_variables)
        gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return {"loss": loss}


model = Linear()
model.compile(optimizer=tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(2**-5)))
model.fit(X, Y, batch_size=2, epochs=3, shuffle=False, verbose=0)
"""
# No loss scaling at all: the reference.
UNSCALED_STEP = (
    TRAIN_STEP.replace("self.optimizer.get_scaled_loss(loss)", "loss")
    .replace("self.optimizer.get_unscaled_gradients(scaled_gradients)", "scaled_gradients")
    .replace(
        "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(2**-5))",
        "tf.keras.optimizers.SGD(2**-5)",
    )
)


@pytest.mark.parametrize(
    "target",
    [pytest.param("keras3", marks=keras3_only), "shim"],
)
def test_train_step_migrated_trains_like_no_scaling(target):
    text = _migrated(TRAIN_STEP, target)
    assert ("self.optimizer.scale_loss(loss)" in text) == (target == "keras3")
    trained = _run(text, X=X, Y=Y)
    assert _weights(trained) == _weights(_run(UNSCALED_STEP, X=X, Y=Y))
    assert int(trained["model"].optimizer.iterations) == 3


@keras2_only
def test_native_train_step_trains_like_no_scaling():
    assert _weights(_run(TRAIN_STEP, X=X, Y=Y)) == _weights(_run(UNSCALED_STEP, X=X, Y=Y))


# -- Wrap-only loops (LSO020): gradients of the unscaled loss reach apply_gradients ---------------
# Keras 2's apply_gradients applies them as given; Keras 3's divides them by the loss scale. By
# hand: loss (w*1 - 4)^2 from w = 0 is 16, its gradient -8, SGD(0.5) takes w to 4, where loss
# and gradient are 0: losses 16, 0, 0. Divided by 32768 the step moves w by 1/8192: ~16 thrice.
WRAP_ONLY = """\
import tensorflow as tf

opt = {optimizer}
w = tf.Variable(0.0)
losses = []


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.square(w * x - y)
    grads = tape.gradient(loss, [w])
    {between}opt.apply_gradients(zip(grads, [w]))
    return loss


for _ in range(3):
    losses.append(float(train_step(tf.constant(1.0), tf.constant(4.0))))
"""
WRAP_ONLY_OPTIMIZERS = {
    "tf24": "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5))",
    "experimental": (
        "tf.keras.mixed_precision.experimental.LossScaleOptimizer("
        'tf.keras.optimizers.SGD(0.5), "dynamic")'
    ),
}
HAND_LOSSES = [16.0, 0.0, 0.0]


def _wrap_only(api: str, between: str = "") -> str:
    return WRAP_ONLY.format(optimizer=WRAP_ONLY_OPTIMIZERS[api], between=between)


@keras2_only
def test_wrap_only_loop_trains_natively_on_keras2_as_worked_out_by_hand():
    assert _run(_wrap_only("tf24"))["losses"] == HAND_LOSSES


@pytest.mark.parametrize("api", sorted(WRAP_ONLY_OPTIMIZERS))
@pytest.mark.parametrize("target", [pytest.param("keras3", marks=keras3_only), "shim"])
def test_wrap_only_loop_migrated_keeps_keras2s_numbers(api, target):
    result = migrate(_wrap_only(api), target)  # type: ignore[arg-type]
    assert not [f for f in result.findings if not f.fixed]
    (lso020,) = [f for f in result.findings if f.code == "LSO020" and "now is" not in f.message]
    assert lso020.line == 13 and lso020.note == (target == "shim")
    assert ("scaled_loss = opt.scale_loss(loss)" in result.text) == (target == "keras3")
    assert _run(result.text)["losses"] == HAND_LOSSES


@keras3_only
def test_wrap_only_loop_without_lso020_trains_at_gradients_over_the_scale_on_keras3():
    """What LSO020 prevents: the silent divergence (the issue's 16.0 over every step)."""
    text = migrate(_wrap_only("tf24"), "keras3", enabled=_codes_but("LSO020")).text
    losses = _run(text)["losses"]
    assert losses[0] == 16.0 and all(15.99 < loss < 16.0 for loss in losses[1:]), losses


@pytest.mark.parametrize("api", sorted(WRAP_ONLY_OPTIMIZERS))
def test_wrap_only_loop_with_clipping_is_reported_at_the_apply_gradients_line(api):
    clipped = _wrap_only(api, between="grads, _ = tf.clip_by_global_norm(grads, 100.0)\n    ")
    result = migrate(clipped, "keras3")
    (finding,) = [f for f in result.findings if not f.fixed]
    assert finding.code == "LSO020" and finding.line == 14
    assert "apply_gradients" in clipped.splitlines()[finding.line - 1]
    if KERAS_MAJOR == 2 and api == "tf24":  # the reference (TF 2.15 has no experimental API):
        # clipping at 100 changes nothing here
        assert _run(clipped)["losses"] == HAND_LOSSES


def _codes_but(code: str) -> list[str]:
    from codemods import table

    return [c for c in table.RULES_BY_CODE if c != code]


# The same through Model.fit: a train_step on self.optimizer that never scales its loss, with a
# LossScaleOptimizer given to compile(); no loss scaling at all is the reference (exact, see X).
WRAP_ONLY_STEP = TRAIN_STEP.replace(
    "            scaled_loss = self.optimizer.get_scaled_loss(loss)\n", ""
).replace(
    "        scaled_gradients = tape.gradient(scaled_loss, self.trainable_variables)\n"
    "        gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)\n",
    "        gradients = tape.gradient(loss, self.trainable_variables)\n",
)


@pytest.mark.parametrize(
    "target",
    [pytest.param("keras3", marks=keras3_only), "shim", pytest.param(None, marks=keras2_only)],
)
def test_wrap_only_train_step_trains_like_no_scaling(target):
    assert "get_scaled_loss" not in WRAP_ONLY_STEP and "LossScaleOptimizer(" in WRAP_ONLY_STEP
    text = WRAP_ONLY_STEP if target is None else _migrated(WRAP_ONLY_STEP, target)
    assert ("self.optimizer.scale_loss(loss)" in text) == (target == "keras3")
    assert _weights(_run(text, X=X, Y=Y)) == _weights(_run(UNSCALED_STEP, X=X, Y=Y))
