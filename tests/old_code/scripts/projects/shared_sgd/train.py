"""One loss scale optimizer over a legacy SGD, compiled with two models, each trained with fit:
TF 2.11-2.15 code, one file (a test project). Written here; no repository's code.

TF 2.15 trains both natively: its legacy optimizers (TF 2.4-2.10's OptimizerV2) create a
variable's momentum slot at its first step, so the second model's variables get theirs when it
first trains; one step counter and one loss scale serve both models. `lr=` is the legacy class's
learning rate. The second model's data overflows float16 once (its third step is skipped). Seeded
NumPy data and starting weights, batches of one sample of one feature (docs/old-code.md says why).
Prints `RESULT {json}`: each fit's losses, the shared scale and `iterations` after each step,
every trained weight.
"""

import json
import math

import numpy as np
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.legacy.SGD(lr=2**-5, momentum=0.5),
    initial_scale=2**8,
    dynamic_growth_steps=3,
)


def build(seed):
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(4, activation="relu", input_shape=(1,)),
            tf.keras.layers.Dense(1, dtype="float32"),
        ]
    )
    rng = np.random.default_rng(seed)
    model.set_weights(
        [(rng.integers(-8, 9, size=w.shape) / 16).astype("float32") for w in model.get_weights()]
    )
    model.compile(optimizer=optimizer, loss="mse")
    return model


def number(value):
    value = float(value)
    return value if math.isfinite(value) else repr(value)


first, second = build(seed=1), build(seed=2)
rng = np.random.default_rng(5)
x = (rng.integers(-16, 17, size=(4, 1)) / 8).astype("float32")
y = (x * x / 2 - x / 4).astype("float32")
y_second = y.copy()
y_second[2, 0] = 2**15  # its gradients overflow float16 at these scales

class Record(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        scales.append(float(optimizer.loss_scale))
        iterations.append(int(optimizer.iterations.numpy()))


losses, scales, iterations = [], [], []
for _ in range(2):
    for model, target in ((first, y), (second, y_second)):
        history = model.fit(x, target, batch_size=1, shuffle=False, verbose=0, callbacks=[Record()])
        losses.append([number(v) for v in history.history["loss"]])

weights = [np.asarray(w, "float32").ravel().tolist() for m in (first, second) for w in m.get_weights()]
print("RESULT " + json.dumps(
    {"losses": losses, "scales": scales, "iterations": iterations, "weights": weights}
))
