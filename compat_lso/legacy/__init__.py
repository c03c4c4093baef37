"""The TF 2.1-2.3 API that TensorFlow removed in 2.9, on every generation.

Reached as `compat_lso.experimental` (the public path), and by `compat_lso.install()` under the
old names (`tf.keras.mixed_precision.experimental`, `tf.train.experimental`, ...).

- `loss_scale.py`: `LossScale`, `FixedLossScale`, `DynamicLossScale`, and how a `loss_scale`
  argument maps to TF 2.4's arguments;
- `optimizer.py`: `LossScaleOptimizer(optimizer, loss_scale)`, a subclass of this generation's
  `compat_lso.LossScaleOptimizer`; `loss_scale_value.py`: its callable `loss_scale`;
- `policy.py`: `Policy(name, loss_scale)`, `set_policy`, `global_policy`;
- `graph_rewrite.py`: `enable_mixed_precision_graph_rewrite` / `disable_...`;
- `construction.py`: which constructions compat_lso made itself (those do not warn).
"""
