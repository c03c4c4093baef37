"""What the audit records: each kind's message, one line (the fact, then `fix:`).

`unscaled-twice` is recorded on Keras 2 too (the old code's own bug there: gradients of a loss
never scaled, divided by the scale); every other kind is a place where Keras 3's own class would
train differently, recorded on Keras 3 only.
"""

from __future__ import annotations

# kind -> what Keras 3's own class would do there, and the fix (one line each).
KINDS = {
    "unscaled-gradients": (
        "apply_gradients got gradients of a loss that was never scaled (no get_scaled_loss or "
        "scale_loss on this optimizer): Keras 3's class would divide them by the loss scale "
        "(32768 by default); fix: scale the loss with opt.scale_loss(loss) inside the tape, or "
        "apply with the inner optimizer"
    ),
    "unscaled-twice": (
        "get_unscaled_gradients divided gradients of a loss get_scaled_loss never scaled: the "
        "code trains at gradients / loss scale today (on Keras 2 too), and Keras 3's "
        "apply_gradients would divide once more; fix, your choice: keep today's numbers (on "
        "Keras 3 drop the call: apply_gradients divides), or take the gradients of the scaled "
        "loss (the numbers change)"
    ),
    "scaled-never-unscaled": (
        "apply_gradients got gradients of a get_scaled_loss loss that get_unscaled_gradients "
        "never divided: this run applies them still scaled, Keras 3's class would divide them; "
        "fix: decide which was meant (usually the division)"
    ),
    "fixed-scale": (
        "dynamic=False: Keras 3's LossScaleOptimizer has no fixed scale (it raises); fix: pass "
        "loss_scale_factor=N to the inner optimizer and use it without a LossScaleOptimizer"
    ),
    "skipped-step": (
        "step skipped for inf/nan gradients: this run (Keras 2's rule) counted it in "
        "`iterations`, Keras 3's class would not, so all that reads iterations falls behind: "
        "Adam-family bias correction (another update at the next applied step), learning-rate "
        "schedules, callbacks; fix: keep Keras 2's rule (compat_lso's class) where that matters"
    ),
    "scale-floor": (
        "inf/nan gradients with the loss scale below 2: Keras 2's rule held it at 1, Keras 3's "
        "would halve it below 1 (0.5, 0.25, ...); fix: find the loss that overflows at any scale"
    ),
    "growth-cap": (
        "the loss scale could not double without overflowing float32: Keras 2's rule kept it, "
        "Keras 3's would double it to inf and skip every later step; fix: raise "
        "dynamic_growth_steps"
    ),
    "keras2-form": "Keras 3's LossScaleOptimizer has no {subject}",
}

# The kinds recorded at a step (apply_gradients, or Keras 2's update rule in it): with the trace
# on (`verify`'s before run), each step's line says which of them occurred at that step. The
# others are recorded where the code is written (construction, a Keras 2 form), whenever it runs.
STEP_KINDS = frozenset(
    {
        "unscaled-gradients",
        "unscaled-twice",
        "scaled-never-unscaled",
        "skipped-step",
        "scale-floor",
        "growth-cap",
    }
)
