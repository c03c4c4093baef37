"""Run several old-code scripts one after another in this one process (harness.run_scripts).

    python tests/old_code/batch.py SCRIPT...      (or under `python -m compat_lso run`, ...)

A TensorFlow start-up costs seconds, more than most of these scripts' training: one process per
mode instead of one per script keeps the suite fast. Each script runs as `python SCRIPT` would
run it (`__main__`, its folder first on sys.path and as the working directory), after the state
one script could leave for the next is reset: the modules imported from the batch's script
folders and from PYTHONPATH's (each folder's `common.py` differs from the next one's and from its
migrated copy's), Keras's global dtype policy and session. Between scripts this prints
`SCRIPT-START i` / `SCRIPT-END i` and, when a script raises, its traceback on stdout and
`SCRIPT-FAILED i`; harness.run_scripts reads them.

What cannot be reset: TensorFlow's devices. A script that configures them (logical devices for
a MirroredStrategy) must come first in its batch, before TensorFlow initialises them.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback


def _forget_modules_from(folders: set[str]) -> None:
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path and os.path.dirname(os.path.abspath(path)) in folders:
            del sys.modules[name]


def _reset_keras() -> None:
    if "tensorflow" not in sys.modules:
        return
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("float32")
    tf.keras.backend.clear_session()


def main(scripts: list[str]) -> int:
    # The folders the scripts import their helpers from (not compat_lso's or TensorFlow's).
    folders = {os.path.dirname(os.path.abspath(path)) for path in scripts}
    folders |= {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    for index, path in enumerate(scripts):
        script = os.path.abspath(path)
        folder = os.path.dirname(script)
        _reset_keras()
        _forget_modules_from(folders)
        print(f"SCRIPT-START {index}", flush=True)
        sys.argv = [script]
        sys.path.insert(0, folder)
        os.chdir(folder)
        try:
            runpy.run_path(script, run_name="__main__")
        except BaseException:  # a script's failure is its own: report it, run the next
            traceback.print_exc(file=sys.stdout)
            print(f"SCRIPT-FAILED {index}", flush=True)
        finally:
            sys.path.remove(folder)
        print(f"SCRIPT-END {index}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
