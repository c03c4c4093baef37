"""The module that start-up hook files written by compat-lso 0.1.0 import.

`python -m compat_lso autoinstall enable` of 0.1.0 wrote a `.pth` line that imports
`compat_lso._startup`; without this module, such a hook would fail at every start after an
upgrade and leave the old names uninstalled. The code is in `compat_lso/installer/startup.py`.
"""

from __future__ import annotations

from compat_lso.installer.startup import install_when_tensorflow_is_imported

__all__ = ["install_when_tensorflow_is_imported"]
