"""TF 2.4-2.15 code in TF official models' shape, run as its user runs it: a RESULT line.

    python official_loop.py          (on TF 2.15, or through `python -m compat_lso run`)

MirroredStrategy on two logical CPU devices; the model and the optimizer are made in
`strategy.scope()` (`performance.configure_optimizer` wraps the optimizer in a
LossScaleOptimizer); the custom loop's `step_fn` scales the loss, unscales the gradients and
applies them inside `strategy.run`, in a tf.function, building nothing beforehand
(official/core/base_task.py's train_step and official/nlp's model_training_utils.py). The model,
data, initial weights and update rule are scenario.py's (same seeds), so the run is compared
with tests/distribute/reference.py; an inf in replica 0's half of global batch 1 and in replica
1's half of global batch 4.
"""

import json

import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

GLOBAL_BATCH, LOCAL_BATCH, STEPS, FEATURES = 8, 4, 6, 4
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def make_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(STEPS * GLOBAL_BATCH, FEATURES)).astype("float32")
    y = (x @ rng.normal(size=(FEATURES,))).astype("float32")
    for step, replica in ((1, 0), (4, 1)):
        x[step * GLOBAL_BATCH + replica * LOCAL_BATCH + 1, 0] = np.inf
    return x, y


def build_model():
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(FEATURES,)),
            tf.keras.layers.Dense(3, activation="tanh"),
            tf.keras.layers.Dense(1),
        ]
    )
    rng = np.random.default_rng(1)
    model.set_weights(
        [
            rng.normal(size=(FEATURES, 3)).astype("float32") / 2,
            rng.normal(size=(3,)).astype("float32") / 4,
            rng.normal(size=(3, 1)).astype("float32") / 2,
            rng.normal(size=(1,)).astype("float32") / 4,
        ]
    )
    return model


with strategy.scope():
    model = build_model()
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.0625, momentum=0.5)
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
        optimizer, initial_scale=1024, dynamic_growth_steps=2
    )

x, y = make_data()
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
iterator = iter(strategy.experimental_distribute_dataset(dataset))


def train_step(iterator):
    def step_fn(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            outputs = model(features, training=True)[:, 0]
            loss = tf.reduce_sum(tf.square(outputs - labels)) / GLOBAL_BATCH
            scaled_loss = loss
            if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
                scaled_loss = optimizer.get_scaled_loss(scaled_loss)
        tvars = model.trainable_variables
        grads = tape.gradient(scaled_loss, tvars)
        if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(list(zip(grads, tvars)))  # noqa: B905  (as the user wrote it)
        return loss

    per_replica_loss = strategy.run(step_fn, args=(next(iterator),))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_loss, axis=None)


train_step = tf.function(train_step)
steps = []
for _ in range(STEPS):
    loss = float(train_step(iterator))
    inner = optimizer.inner_optimizer
    variables = inner.variables() if callable(inner.variables) else inner.variables
    momentum = [v for v in variables if len(v.shape) > 0]
    state = [w.numpy() for w in model.trainable_variables] + [v.numpy() for v in momentum]
    steps.append(
        {
            "loss": loss,
            "scale": float(optimizer.loss_scale),
            "counter": int(optimizer.dynamic_counter.numpy()),
            "iterations": int(optimizer.iterations.numpy()),
            "state": [float(v) for array in state for v in np.ravel(array)],
        }
    )
print("RESULT " + json.dumps({"steps": steps}))
