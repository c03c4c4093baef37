"""The command-line forms around the old-code runs: `run -m MODULE`, the start-up hook's line in
a site directory, gated by COMPAT_LSO_INSTALL, in today's form and in compat-lso 0.1.0's, the
opt-out's forms (`run --keep-native`, COMPAT_LSO_KEEP_NATIVE) and `install()` as the first line of
a fresh process.

What these check is Python's plumbing: runpy's module form, the .pth line read by `site`, the
variable that gates it and the environment a child inherits. The install they end in is the one
test_run_unmodified.py and test_tf24_scripts.py run on every anchor (`run`, `startup-hook`); so
these run where the Python differs, on CI's edge of the newest Python (py313-tf221, where
Python's plumbing changes first) and the matrix's other Pythons, and on no anchor (noxfile.py's
SOME_ANCHORS), each in a fresh process as a user's shell starts it.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from compat_lso import __main__ as cli
from tests.old_code import harness, shared_runs
from tests.shim.backend import IS_KERAS_3

SCRIPTS = pathlib.Path(__file__).parent / "scripts"


def _run(arguments: list[str], extra_env: dict[str, str] | None = None) -> dict:
    """A command line of this interpreter, in scripts/, and the RESULT it prints."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SCRIPTS), os.environ.get("PYTHONPATH", "")]),
        **(extra_env or {}),
    }
    result = subprocess.run(
        [sys.executable, *arguments],
        cwd=SCRIPTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return harness.parse(result, " ".join(arguments))


def test_run_module_form():
    result = _run(["-m", "compat_lso", "run", "-m", "custom_loop"])
    assert result["iterations"] == 8


# The line compat-lso 0.1.0's `autoinstall enable` wrote (the module has moved since): hook files
# stay in an environment that upgrades, and must keep working.
PTH_LINE_0_1_0 = (
    "import os; os.environ.get('COMPAT_LSO_INSTALL', '').strip().lower() not in "
    "('', '0', 'false', 'no') and __import__('compat_lso._startup', fromlist=['_'])"
    ".install_when_tensorflow_is_imported()\n"
)


@pytest.mark.parametrize(
    ("line", "variable", "installed"),
    [
        pytest.param(cli.PTH_LINE, None, False, id="without-the-variable"),
        pytest.param(PTH_LINE_0_1_0, "1", True, id="0.1.0-hook-file"),
    ],
)
def test_startup_hook_line_in_a_site_directory(tmp_path, line, variable, installed):
    (tmp_path / cli.PTH_NAME).write_text(line)
    check = (
        "import site, sys; site.addsitedir(sys.argv[1]); import tensorflow as tf; print('RESULT', "
        "'{\"installed\": %s}' % str(hasattr(tf.keras.mixed_precision, 'experimental')).lower())"
    )
    env = {key: value for key, value in os.environ.items() if key != "COMPAT_LSO_INSTALL"}
    if variable is not None:
        env["COMPAT_LSO_INSTALL"] = variable
    result = subprocess.run(
        [sys.executable, "-c", check, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert f'RESULT {{"installed": {str(installed).lower()}}}' in result.stdout


# The opt-out (COMPAT_LSO_KEEP_NATIVE, `run --keep-native`) as a shell sets it; what keep_native
# does in the process is test_install_native_names.py's, on every Keras 3 cell.
# The variable as the script sees it: `run --keep-native` sets it for the script and so for its
# children (a launcher's workers), and plain `run` does not.
_REPORT_NAMES = """
import tensorflow as tf, keras, json, os
print("RESULT " + json.dumps({
    "native": tf.keras.mixed_precision.LossScaleOptimizer is keras.optimizers.LossScaleOptimizer,
    "experimental": hasattr(tf.keras.mixed_precision, "experimental"),
    "variable": os.environ.get("COMPAT_LSO_KEEP_NATIVE"),
}))
"""


@pytest.mark.skipif(
    not IS_KERAS_3, reason="Keras 2's native class has TF 2.4's meaning: nothing is replaced"
)
@pytest.mark.parametrize(
    "mode, env, native, variable",
    [
        ("run", {}, False, None),
        ("run-keep-native", {}, True, "1"),
        ("run", {"COMPAT_LSO_KEEP_NATIVE": "1"}, True, "1"),
        ("startup-hook", {"COMPAT_LSO_KEEP_NATIVE": "1"}, True, "1"),
    ],
    ids=["run", "run-keep-native", "run-with-variable", "startup-hook-with-variable"],
)
def test_the_opt_out_from_the_command_line(tmp_path, mode, env, native, variable):
    script = tmp_path / "names.py"
    script.write_text(_REPORT_NAMES)
    result = harness.run_script(script, mode, env=env)
    assert result == {"native": native, "experimental": True, "variable": variable}


def test_install_first_in_a_fresh_process_gives_tf215_numbers():
    """`compat_lso.install()` as a script's first line, in a fresh interpreter, then TF 2.4 code
    (the one-line way); install() in a process that imported TensorFlow runs on every cell
    (test_install.py)."""
    script = shared_runs.TF24_ONE
    reference = shared_runs.TF24_REFERENCE[script.relative_to(shared_runs.TESTS).as_posix()]
    assert harness.run_script(script, "install", pythonpath=[SCRIPTS]) == reference
