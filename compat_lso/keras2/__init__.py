"""Keras 2 (`tf.keras` on TF <= 2.15, and tf_keras with TF_USE_LEGACY_KERAS=1 on TF 2.16+).

`optimizer.py`: the shim's `LossScaleOptimizer`, Keras 2's own class with TF 2.4's constructor
and configs in every historical form. `install()` replaces nothing of Keras 2's here: its native
class already has TF 2.4's meaning, so on Keras 2 `install()` only restores the TF 2.1-2.3 names
(`compat_lso/legacy/`). Imported only on Keras 2, through `compat_lso._backend`.
"""
