"""The deprecated TF 2.1-2.3 API: `experimental.LossScaleOptimizer(optimizer, loss_scale)`.

As in TF 2.4, the experimental class subclasses the non-experimental one and differs only in its
constructor, which translates `loss_scale` into `dynamic` / `initial_scale` /
`dynamic_growth_steps` exactly as the old class's own constructor did
(`_create_loss_scale_optimizer_from_v1_loss_scale` in Keras 2).

The public path: the code is in `compat_lso/legacy/` (`loss_scale.py`, `optimizer.py`,
`policy.py`, `graph_rewrite.py`).
"""

from __future__ import annotations

from compat_lso.legacy.graph_rewrite import (
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)
from compat_lso.legacy.loss_scale import DynamicLossScale, FixedLossScale, LossScale
from compat_lso.legacy.optimizer import LossScaleOptimizer
from compat_lso.legacy.policy import Policy, global_policy, set_policy

__all__ = [
    "LossScale",
    "FixedLossScale",
    "DynamicLossScale",
    "LossScaleOptimizer",
    "Policy",
    "set_policy",
    "global_policy",
    "enable_mixed_precision_graph_rewrite",
    "disable_mixed_precision_graph_rewrite",
]
