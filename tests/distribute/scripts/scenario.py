"""One distributed-training scenario run, reported as a `RESULT {json}` line.

    python scenario.py STRATEGY MODE/CLASS/POISON [MODE/CLASS/POISON ...]

STRATEGY is `single` (TensorFlow's default strategy, one device), `mirrored` (MirroredStrategy
on two logical CPU devices of this process) or `multiworker` (MultiWorkerMirroredStrategy; the
cluster comes from TF_CONFIG, one CPU replica per worker process). Each run named after it is
trained from the same initial weights on the same global batches and reported under its name:
MODE is `fit` (Model.fit) or `loop` (a tf.function custom loop around `strategy.run`), CLASS is
`compat`, `experimental` or `native` (tf.keras.mixed_precision.LossScaleOptimizer), POISON is
`none` or `STEP:REPLICA[+STEP:REPLICA...]`: an inf in REPLICA's half of global batch STEP.

The data split is exact: global batch k is rows [8k, 8k+8); replica r of 2 trains on rows
[8k+4r, 8k+4r+4), fed through `distribute_datasets_from_function`, so a distributed step sees
exactly the global batch the single-device step sees. Losses are `sum(per example) / 8` in the
custom loop and Keras's `mse` (mean over the global batch) in `fit`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np

STRATEGY, RUNS = sys.argv[1], sys.argv[2:]

import tensorflow as tf  # noqa: E402  (after argv parsing; logical devices come next)

if STRATEGY == "mirrored":
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import compat_lso  # noqa: E402
import compat_lso.experimental  # noqa: E402

KERAS_3 = not hasattr(tf.keras.mixed_precision.LossScaleOptimizer, "get_scaled_loss")
REPLICAS = 2  # in the distributed runs; the single-device run sees the same global batches
GLOBAL_BATCH = 8
LOCAL_BATCH = GLOBAL_BATCH // REPLICAS
STEPS = 6
FEATURES = 4
INITIAL_SCALE = 1024.0
GROWTH_STEPS = 2
LEARNING_RATE = 0.0625
MOMENTUM = 0.5


def make_strategy() -> tf.distribute.Strategy:
    if STRATEGY == "single":
        return tf.distribute.get_strategy()
    if STRATEGY == "mirrored":
        return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    if STRATEGY == "multiworker":
        options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=60)
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    raise SystemExit(f"unknown strategy {STRATEGY!r}")


strategy = make_strategy()
assert strategy.num_replicas_in_sync == (1 if STRATEGY == "single" else REPLICAS), strategy


def make_data(poison: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(STEPS * GLOBAL_BATCH, FEATURES)).astype("float32")
    y = (x @ rng.normal(size=(FEATURES,))).astype("float32")
    for spot in poison.split("+") if poison != "none" else []:
        step, replica = (int(part) for part in spot.split(":"))
        # tanh(inf * w) is finite, so the loss stays finite; the kernel's gradient is 0 * inf = nan.
        x[step * GLOBAL_BATCH + replica * LOCAL_BATCH + 1, 0] = np.inf
    return x, y


def make_input(x: np.ndarray, y: np.ndarray, for_fit: bool):
    """Global batches, split exactly: replicas [a, b) get their halves, in order."""
    if STRATEGY == "single":
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
        return dataset if for_fit else iter(dataset)

    def dataset_fn(context: tf.distribute.InputContext) -> tf.data.Dataset:
        assert context.get_per_replica_batch_size(GLOBAL_BATCH) == LOCAL_BATCH
        per_pipeline = context.num_replicas_in_sync // context.num_input_pipelines
        first = context.input_pipeline_id * per_pipeline
        rows = [
            np.arange(
                step * GLOBAL_BATCH + r * LOCAL_BATCH, step * GLOBAL_BATCH + (r + 1) * LOCAL_BATCH
            )
            for step in range(STEPS)
            for r in range(first, first + per_pipeline)
        ]
        # Consecutive elements go to consecutive local replicas.
        return tf.data.Dataset.from_tensor_slices(
            (np.stack([x[i] for i in rows]), np.stack([y[i] for i in rows]))
        )

    options = tf.distribute.InputOptions(experimental_fetch_to_device=True)
    distributed = strategy.distribute_datasets_from_function(dataset_fn, options)
    return distributed if for_fit else iter(distributed)


def initial_weights() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [
        rng.normal(size=(FEATURES, 3)).astype("float32") / 2,
        rng.normal(size=(3,)).astype("float32") / 4,
        rng.normal(size=(3, 1)).astype("float32") / 2,
        rng.normal(size=(1,)).astype("float32") / 4,
    ]


def make_optimizer(kind: str):
    inner = tf.keras.optimizers.SGD(LEARNING_RATE, momentum=MOMENTUM)
    if kind == "compat":
        return compat_lso.LossScaleOptimizer(
            inner, initial_scale=INITIAL_SCALE, dynamic_growth_steps=GROWTH_STEPS
        )
    if kind == "experimental":
        loss_scale = compat_lso.experimental.DynamicLossScale(INITIAL_SCALE, GROWTH_STEPS)
        return compat_lso.experimental.LossScaleOptimizer(inner, loss_scale)
    if kind == "native":
        return tf.keras.mixed_precision.LossScaleOptimizer(
            inner, initial_scale=INITIAL_SCALE, dynamic_growth_steps=GROWTH_STEPS
        )
    raise SystemExit(f"unknown class {kind!r}")


def slot_variables(optimizer) -> list:
    inner = optimizer.inner_optimizer
    variables = inner.variables() if callable(inner.variables) else inner.variables
    return [v for v in variables if len(v.shape) > 0]  # the momentum slots


def digest(arrays) -> str:
    sha = hashlib.sha256()
    for array in arrays:
        sha.update(np.ascontiguousarray(array).tobytes())
    return sha.hexdigest()[:16]


def snapshot(model, optimizer) -> dict:
    """What each replica holds now: the loss scale, the counter, weights and slots."""
    weights = list(model.trainable_weights)

    tf24_api = hasattr(optimizer, "get_scaled_loss")
    # Keras 3's native class has neither `loss_scale` nor `dynamic_counter`.
    scale = (lambda: optimizer.loss_scale) if tf24_api else (lambda: optimizer.dynamic_scale)
    counter = (lambda: optimizer.dynamic_counter) if tf24_api else (lambda: optimizer.step_counter)

    def read():
        return (
            tf.identity(tf.convert_to_tensor(scale())),
            tf.identity(tf.convert_to_tensor(counter())),
            [tf.identity(v) for v in weights + slot_variables(optimizer)],
        )

    per_replica = strategy.run(read)
    scales = [float(s) for s in strategy.experimental_local_results(per_replica[0])]
    counters = [int(c) for c in strategy.experimental_local_results(per_replica[1])]
    states = [
        [np.asarray(r) for r in strategy.experimental_local_results(v)] for v in per_replica[2]
    ]
    replicas = len(scales)
    return {
        "scale": scales,
        "counter": counters,
        "iterations": int(optimizer.iterations.numpy()),
        # Bit-exact digest of weights and slots, per replica (replicas must agree).
        "state_digest": [digest([state[r] for state in states]) for r in range(replicas)],
        # The first replica's weights and slots, for comparing with other runs under a tolerance.
        "state": [float(v) for state in states for v in np.ravel(state[0])],
    }


def build_model():
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(FEATURES,)),
            tf.keras.layers.Dense(3, activation="tanh"),
            tf.keras.layers.Dense(1),
        ]
    )
    model.set_weights(initial_weights())
    return model


def run_fit(kind: str, poison: str) -> dict:
    with strategy.scope():
        model = build_model()
        optimizer = make_optimizer(kind)
        model.compile(optimizer=optimizer, loss="mse")
    steps: list[dict] = []

    class Record(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            steps.append({"loss": float(logs["loss"]), **snapshot(model, optimizer)})

    x, y = make_data(poison)
    model.fit(
        make_input(x, y, for_fit=True),
        epochs=1,
        steps_per_epoch=STEPS,
        verbose=0,
        callbacks=[Record()],
    )
    return {"steps": steps}


def run_loop(kind: str, poison: str) -> dict:
    with strategy.scope():
        model = build_model()
        optimizer = make_optimizer(kind)
        if KERAS_3 and kind == "native":
            # Keras 3 cannot create any optimizer's variables in the first call of a tf.function
            # under MirroredStrategy (plain SGD fails the same way: "You must feed a value for
            # placeholder tensor 'cond/else/...'"; keras-team/keras#19246, #18666), so its custom
            # loops build them in scope first. The shim's classes build in the first step, as
            # Keras 2's did and as TF 2.4-2.15 code (TF official models' loop) relies on.
            optimizer.build(model.trainable_variables)
    tf24_api = hasattr(optimizer, "get_scaled_loss")

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            prediction = model(x, training=True)[:, 0]
            loss = tf.reduce_sum(tf.square(prediction - y)) / GLOBAL_BATCH
            if tf24_api:
                scaled_loss = optimizer.get_scaled_loss(loss)
            else:  # Keras 3's native class: it divides the scaled gradients in apply_gradients
                scaled_loss = optimizer.scale_loss(loss)
        grads = tape.gradient(scaled_loss, model.trainable_variables)
        if tf24_api:
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    @tf.function
    def train_step(batch):
        losses = strategy.run(replica_step, args=batch)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    x, y = make_data(poison)
    batches = make_input(x, y, for_fit=False)
    replica_ids = [int(i) for i in strategy.experimental_local_results(strategy.run(replica_id))]
    steps = []
    for step in range(STEPS):
        batch = next(batches)
        check_split(step, replica_ids, batch, x, y)
        loss = train_step(batch)
        steps.append({"loss": float(loss), **snapshot(model, optimizer)})
    return {"steps": steps, "replica_ids": replica_ids}


def replica_id() -> tf.Tensor:
    return tf.constant(tf.distribute.get_replica_context().replica_id_in_sync_group)


def check_split(step: int, replica_ids: list[int], batch, x: np.ndarray, y: np.ndarray) -> None:
    """Each local replica got exactly its half of global batch `step` (the whole of it alone)."""
    rows = GLOBAL_BATCH // strategy.num_replicas_in_sync
    for values, expected in zip(batch, (x, y), strict=True):
        for replica, local in zip(
            replica_ids, strategy.experimental_local_results(values), strict=True
        ):
            start = step * GLOBAL_BATCH + replica * rows
            assert np.array_equal(np.asarray(local), expected[start : start + rows]), (
                step,
                replica,
            )


results = {}
for name in RUNS:
    mode, kind, poison = name.split("/")
    results[name] = (run_fit if mode == "fit" else run_loop)(kind, poison)

resolver_task = None
if STRATEGY == "multiworker":
    resolver_task = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
print(
    "RESULT "
    + json.dumps({"strategy": STRATEGY, "worker": resolver_task, "runs": results}, sort_keys=True)
)
