"""Run several old-code scripts one after another in this one process; print what each reported.

    python tests/old_code/run_many.py [--path DIR]... SCRIPT...

`harness.run_scripts` starts it (plainly, or through `python -m compat_lso run`), so that a
corpus of scripts costs one TensorFlow start per mode instead of one per script. Each script runs
as `__main__` (runpy) in its own folder, with that folder and every `--path` first on sys.path
and its helper modules imported afresh; between scripts Keras' global state is reset
(`clear_session`, the float32 global policy). Its last `RESULT {json}` line counts; a script that
raises is recorded with its traceback and the next one runs. The last line printed is
`RESULTS {json}`: {script path as given: {"result": {...}} or {"error": "traceback"}}.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pathlib
import runpy
import sys
import traceback
from typing import Any


def run_one(script: pathlib.Path, paths: list[str]) -> dict[str, Any]:
    folders = [str(script.parent), *paths]
    saved_path, saved_argv, saved_cwd = list(sys.path), list(sys.argv), os.getcwd()
    # A helper module of the previous script's folder (common.py, hvd.py) must not be reused.
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        if any(file.startswith(folder + os.sep) for folder in folders):
            del sys.modules[name]
    sys.path[:0] = folders
    sys.argv = [str(script)]
    output = io.StringIO()
    try:
        os.chdir(script.parent)
        with contextlib.redirect_stdout(output):
            runpy.run_path(str(script), run_name="__main__")
    except BaseException:  # SystemExit too: the script's failure is its outcome
        return {"error": traceback.format_exc()}
    finally:
        sys.path[:], sys.argv = saved_path, saved_argv
        os.chdir(saved_cwd)
        _reset_keras()
    lines = [line for line in output.getvalue().splitlines() if line.startswith("RESULT ")]
    if not lines:
        return {"error": "no RESULT line; output:\n" + output.getvalue()[-2000:]}
    result: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT "))
    return {"result": result}


def _reset_keras() -> None:
    import tensorflow as tf

    tf.keras.backend.clear_session()
    tf.keras.mixed_precision.set_global_policy("float32")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scripts", nargs="+")
    parser.add_argument("--path", action="append", default=[], help="a folder put on sys.path")
    arguments = parser.parse_args(argv)
    import tensorflow  # noqa: F401 - once, before the first script (`run` installs right after it)

    paths = [str(pathlib.Path(p).resolve()) for p in arguments.path]
    results = {name: run_one(pathlib.Path(name).resolve(), paths) for name in arguments.scripts}
    print("RESULTS " + json.dumps(results, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
