"""Restore TensorFlow-format checkpoints written by Keras 2 on any backend, Keras 3 included.

`load_legacy_checkpoint(prefix, model=..., optimizer=...)` reads a checkpoint written with
`model.save_weights(..., save_format="tf")` or `tf.train.Checkpoint(model=..., optimizer=...)`
by Keras 2 (TF 2.4 to 2.15, tf_keras) or by TF 2.2 (whose LossScaleOptimizer kept its inner
optimizer under `base_optimizer`), and restores into today's objects:

- the model's weights, matched through the checkpoint's object graph (`layer_with_weights-N`,
  then attribute names such as `kernel`, `cell/kernel`, `moving_mean`);
- the loss-scale state (`current_loss_scale`, `good_steps`);
- the inner optimizer's `iterations`, learning rate variable and slots, each slot attached to
  the model variable the object graph says it belongs to.

Every value in the checkpoint ends up in exactly one of three lists: restored, skipped (not
asked for, or a hyperparameter the target keeps in its config), or unmapped. The whole plan,
shapes and dtypes checked, is made before anything is assigned; with `strict=True` (the
default) an unmapped value on either side (a checkpoint value with no target, or target state
that the checkpoint does not provide) raises `LegacyCheckpointError` listing all of them and
nothing is assigned.

The steps, one module each: `layouts.py` reads the checkpoint's object graph and finds the
optimizer in Keras 2's and TF 2.2's layouts; `targets.py` finds each variable of today's model and
optimizer; `plan.py` maps one onto the other, checked, before anything is assigned; `restore.py`
(`load_legacy_checkpoint`) runs the steps and assigns; `result.py` holds what it returns.
"""

from __future__ import annotations

# Documented (docs/checkpoints.md) as `compat_lso.checkpoint.SLOT_TABLE`.
from compat_lso.checkpoint.layouts import SLOT_TABLE as SLOT_TABLE
from compat_lso.checkpoint.restore import load_legacy_checkpoint
from compat_lso.checkpoint.result import (
    LegacyCheckpointError,
    LegacyCheckpointRestore,
    RestoredValue,
    SkippedValue,
)

__all__ = [
    "LegacyCheckpointError",
    "LegacyCheckpointRestore",
    "RestoredValue",
    "SkippedValue",
    "load_legacy_checkpoint",
]
