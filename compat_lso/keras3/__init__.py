"""Keras 3 (`tf.keras` on TF >= 2.16): TF 2.4's loss scale optimizer on top of Keras 3's class.

- `optimizer.py`: the shim's `LossScaleOptimizer` (arguments, constructor, config), built from
  `update_rule.py` (Keras 2's update rule), `tf24_surface.py` (TF 2.4's methods and properties)
  and `keras2_parts.py` (Keras 2's checkpoint layout, delegated settings, warning);
  `native.py` holds Keras 3's own names and the gates where Keras 3 releases differ.
- `installed.py`: what `compat_lso.install()` puts in place of Keras 3's own
  `tf.keras.mixed_precision.LossScaleOptimizer` name.

Imported only on Keras 3, through `compat_lso._backend`.
"""
