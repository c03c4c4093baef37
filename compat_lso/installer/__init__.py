"""`compat_lso.install()` / `uninstall()` and the ways to run them without changing the code.

- `names.py`: `install()` / `uninstall()` (public as `compat_lso.install` / `uninstall`): the
  TF 2.1-2.3 names on every generation (from `compat_lso/legacy/`), and on Keras 3 the class from
  `compat_lso/keras3/installed.py` behind Keras 3's own `LossScaleOptimizer` name;
- `startup.py`: install right after TensorFlow's import (`python -m compat_lso run`, the
  COMPAT_LSO_INSTALL start-up hook);
- `environment.py`: the environment variables both read.

Not named `install`: that name is the public function `compat_lso.install`.
"""
