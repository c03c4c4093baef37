"""An independent reference for the bundled project: its training worked out in NumPy.

examples/legacy_project/train.py trains a Dense(16, relu, mixed_float16) -> Dense(1) model with
SGD(0.05) under a dynamic loss scale (initial 2**10, doubled after 4 finite steps, halved on an
overflow, which skips the step). The same maths here, by hand, in float64 and with no TensorFlow:
the loss scale is exact (powers of two, counted by hand), the losses and weights agree with a real
run up to float16 rounding (the first layer computes in float16 there). `make demo` and
tests/codemods/test_codemod_example_project.py compare the shim's runs with it, so the migrated
and unmodified code are checked against something other than each other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

LEARNING_RATE = 0.05
INITIAL_SCALE = 2.0**10
GROWTH_STEPS = 4
# Float16 rounding in the first layer, carried over 12 steps: observed at most 3e-4 relative on
# the losses and 8e-4 absolute on the weights (TF 2.21), so a wrong scale factor or a step taken
# on an overflow is far outside.
RTOL = 2e-3
ATOL = 2e-3


def train(
    batches: Sequence[tuple[np.ndarray, np.ndarray]], initial_weights: Sequence[np.ndarray]
) -> tuple[list[tuple[float, float]], list[np.ndarray]]:
    """(loss, loss scale after the step) per step, and the trained weights."""
    kernel1, bias1, kernel2, bias2 = (np.asarray(w, dtype=np.float64) for w in initial_weights)
    scale, good_steps = INITIAL_SCALE, 0
    history = []
    for x, y in batches:
        # The mixed_float16 layer casts its input to float16: 1e30 becomes inf there.
        with np.errstate(over="ignore", invalid="ignore"):
            inputs = x.astype(np.float16).astype(np.float64)
            hidden_in = inputs @ kernel1 + bias1
            hidden = np.maximum(hidden_in, 0.0)
            error = hidden @ kernel2 + bias2 - y
            loss = float(np.mean(error**2))
            d_output = 2.0 * error / error.size
            d_hidden_in = (d_output @ kernel2.T) * (hidden_in > 0)
            gradients = [
                inputs.T @ d_hidden_in,
                d_hidden_in.sum(axis=0),
                hidden.T @ d_output,
                d_output.sum(axis=0),
            ]
        if all(np.isfinite(g).all() for g in gradients):
            kernel1, bias1, kernel2, bias2 = (
                w - LEARNING_RATE * g
                for w, g in zip((kernel1, bias1, kernel2, bias2), gradients, strict=True)
            )
            good_steps += 1
            if good_steps == GROWTH_STEPS:
                scale, good_steps = scale * 2, 0
        else:  # overflow: the step is skipped and the scale halved (never below 1)
            scale, good_steps = max(scale / 2, 1.0), 0
        history.append((loss, scale))
    return history, [kernel1, bias1, kernel2, bias2]


def mismatches(
    history: Sequence[tuple[float, float]],
    weights: Sequence[np.ndarray],
    reference: tuple[list[tuple[float, float]], list[np.ndarray]],
) -> list[str]:
    """What differs from the reference: the scales exactly, losses and weights within RTOL/ATOL."""
    expected_history, expected_weights = reference
    problems = []
    scales = [scale for _, scale in history]
    expected_scales = [scale for _, scale in expected_history]
    if scales != expected_scales:
        problems.append(f"loss scales {scales} != {expected_scales}")
    for step, ((loss, _), (expected, _)) in enumerate(
        zip(history, expected_history, strict=True)
    ):
        if np.isfinite(expected) != np.isfinite(loss) or (
            np.isfinite(expected) and not np.isclose(loss, expected, rtol=RTOL, atol=ATOL)
        ):
            problems.append(f"step {step}: loss {loss} != {expected}")
    for index, (actual, expected) in enumerate(zip(weights, expected_weights, strict=True)):
        if not np.allclose(actual, expected, rtol=RTOL, atol=ATOL):
            worst = float(np.max(np.abs(np.asarray(actual, dtype=np.float64) - expected)))
            problems.append(f"weight {index}: off by up to {worst:.3g}")
    return problems
