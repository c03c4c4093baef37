"""TF 2.4-2.15: Keras 2's dynamic update rule, step by step, with inf and nan gradients injected.

The scale halves on a non-finite step but never drops below 1, doubles after
`dynamic_growth_steps` finite steps but never to inf, and a skipped step still counts as an
iteration.
"""

import math

import tensorflow as tf

from common import report

INF, NAN = math.inf, math.nan


def trajectory(optimizer, gradients, traced):
    variable = tf.Variable([1.0, -2.0])

    def step(gradient):
        optimizer.apply_gradients([(gradient, variable)])

    if traced:
        step = tf.function(step)
    rows = []
    for values in gradients:
        step(tf.constant(values, dtype=tf.float32))
        rows.append(
            {
                "loss_scale": float(optimizer.loss_scale),
                "dynamic_counter": int(optimizer.dynamic_counter.numpy()),
                "iterations": int(optimizer.iterations.numpy()),
                "variable": [float(v) for v in variable.numpy()],
            }
        )
    return rows


# Overflows from a small scale: 4 -> 2 -> 1, then the floor holds at 1; growth every 2 steps.
floor = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=0.5), initial_scale=4, dynamic_growth_steps=2
)
floor_gradients = [
    [1.0, 1.0],
    [INF, 1.0],
    [1.0, NAN],
    [INF, INF],
    [NAN, NAN],
    [0.5, 0.25],
    [0.5, 0.25],
    [0.5, -INF],
    [0.25, 0.5],
    [0.25, 0.5],
    [0.25, 0.5],
    [0.25, 0.5],
]
# Growth near float32's largest power of two: 2**126 -> 2**127, and 2**128 (inf) never comes.
ceiling = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=0.5), initial_scale=2.0**126, dynamic_growth_steps=1
)
ceiling_gradients = [[0.0, 0.0]] * 4 + [[INF, 0.0]] + [[0.0, 0.0]] * 3

report(
    floor_eager=trajectory(floor, floor_gradients, traced=False),
    ceiling_traced=trajectory(ceiling, ceiling_gradients, traced=True),
    floor_dynamic=floor.dynamic,
    floor_initial_scale=float(floor.initial_scale),
    floor_dynamic_growth_steps=floor.dynamic_growth_steps,
)
