"""Test sessions: the suite runs once per supported TensorFlow/Keras generation.

`nox` runs the whole suite on two anchor cells, one per generation of tf.keras (`make test`);
`nox -s "tests(tf215)"` runs one, `nox -s tests` all three (tf_keras too, as CI does). `nox -s
matrix` runs a compact set of tests on every other supported release line (docs/support.md
shows the last run as a table; `nox -s support_table` redraws it).
`nox -s docs` builds the documentation (`mkdocs build --strict`), `nox -s lint` runs ruff and
mypy, `nox -s package` builds and checks the sdist and the wheel, `nox -s upstream_tests` runs
Keras 2.8's and tf-keras's own tests from local checkouts; none of these runs by default.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import re
import resource
import shlex
import shutil
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Sequence
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
LEGACY_KERAS = {"TF_USE_LEGACY_KERAS": "1"}

# The anchor cells: the whole suite runs on each (`nox -s tests`). Each is one Keras generation the
# shim must behave identically on.
BACKENDS = {
    # tf.keras is Keras 2 (keras 2.15).
    "tf215": (["tensorflow==2.15.1"], {}),
    # tf.keras is Keras 3.
    "tf221": (["tensorflow==2.21.0"], {}),
    # tf.keras is tf_keras, the Keras 2 line kept alive as a separate package.
    "tf221-tfkeras": (["tensorflow==2.21.0", "tf-keras==2.21.0"], LEGACY_KERAS),
}
# `make test` (a bare `nox`): the newest release of each generation of tf.keras, Keras 2 and
# Keras 3, inside the 15 minutes a slow CI machine allows it (docs/support.md). tf_keras, Keras 2's
# code as a package of its own, runs the whole suite in CI (`nox -t ci`, beside the edges): it
# took a third of `make test`'s time for a third generation of the same Keras 2 classes.
MAKE_TEST = ("tf215", "tf221")
nox.options.sessions = [f"tests({backend})" for backend in MAKE_TEST]

# Every other release line users run (the latest patch of each minor), for `nox -s matrix`:
# TF 2.12-2.14 (Keras 2), each Keras 3 minor with a TensorFlow that accepts it (`keras>=` in
# TensorFlow's wheel metadata: 2.16 takes 3.0, 2.17 takes 3.2, 2.18/2.19 take 3.5, 2.20 takes
# 3.10, 2.21 takes 3.12), and tf_keras 2.16-2.20 (each pins its own TensorFlow minor).
MATRIX = {
    "tf212": (["tensorflow==2.12.1"], {}),
    "tf213": (["tensorflow==2.13.1"], {}),
    "tf214": (["tensorflow==2.14.1"], {}),
    "tf216-keras3.0": (["tensorflow==2.16.2", "keras==3.0.5"], {}),
    "tf216-keras3.1": (["tensorflow==2.16.2", "keras==3.1.1"], {}),
    "tf217-keras3.2": (["tensorflow==2.17.1", "keras==3.2.1"], {}),
    "tf217-keras3.3": (["tensorflow==2.17.1", "keras==3.3.3"], {}),
    "tf217-keras3.4": (["tensorflow==2.17.1", "keras==3.4.1"], {}),
    "tf218-keras3.5": (["tensorflow==2.18.1", "keras==3.5.0"], {}),
    "tf218-keras3.6": (["tensorflow==2.18.1", "keras==3.6.0"], {}),
    "tf219-keras3.7": (["tensorflow==2.19.1", "keras==3.7.0"], {}),
    "tf219-keras3.8": (["tensorflow==2.19.1", "keras==3.8.0"], {}),
    "tf219-keras3.9": (["tensorflow==2.19.1", "keras==3.9.2"], {}),
    "tf220-keras3.10": (["tensorflow==2.20.0", "keras==3.10.0"], {}),
    "tf220-keras3.11": (["tensorflow==2.20.0", "keras==3.11.3"], {}),
    "tf221-keras3.12": (["tensorflow==2.21.0", "keras==3.12.4"], {}),
    "tf221-keras3.13": (["tensorflow==2.21.0", "keras==3.13.2"], {}),
    "tf221-keras3.14": (["tensorflow==2.21.0", "keras==3.14.1"], {}),
    # What `pip install tensorflow==2.16.2` gives today: the oldest Keras 3 TensorFlow with the
    # newest Keras (3.15, as on the tf221 anchor).
    "tf216": (["tensorflow==2.16.2", "keras==3.15.1"], {}),
    "tf216-tfkeras": (["tensorflow==2.16.2", "tf-keras==2.16.0"], LEGACY_KERAS),
    "tf217-tfkeras": (["tensorflow==2.17.1", "tf-keras==2.17.0"], LEGACY_KERAS),
    "tf218-tfkeras": (["tensorflow==2.18.1", "tf-keras==2.18.0"], LEGACY_KERAS),
    "tf219-tfkeras": (["tensorflow==2.19.1", "tf-keras==2.19.0"], LEGACY_KERAS),
    "tf220-tfkeras": (["tensorflow==2.20.0", "tf-keras==2.20.1"], LEGACY_KERAS),
    # The Pythons users run beside 3.11 (CELL_PYTHON): TF 2.16-2.21 ship wheels for 3.12, TF
    # 2.20-2.21 for 3.13. TF 2.21 on 3.13 is a CI edge (CI_EDGES).
    "py312-tf216": (["tensorflow==2.16.2", "keras==3.15.1"], {}),
    "py312-tf221": (["tensorflow==2.21.0"], {}),
    "py313-tf220": (["tensorflow==2.20.0"], {}),
    "py313-tf221": (["tensorflow==2.21.0"], {}),
    "py313-tf221-tfkeras": (["tensorflow==2.21.0", "tf-keras==2.21.0"], LEGACY_KERAS),
}
# The cells above that run on another Python than PYTHON.
CELL_PYTHON = {
    cell: "3.12" if cell.startswith("py312") else "3.13"
    for cell in MATRIX
    if cell.startswith("py3")
}

# The matrix's compact set: the shim and old code run unmodified (Keras 3's own loss scale
# optimizer tests from the installed wheel among them, where the wheel ships them). The anchors
# run everything. Left out: the codemod (no TensorFlow), checkpoint conversion, distribution
# strategies, the CI helpers and the docs. Upstream's Keras 2 test files run from checkouts in
# `nox -s upstream_tests`, never in CI.
COMPACT = ["tests/test_backend.py", "tests/shim", "tests/old_code"]
# Every session runs two pytest-xdist workers, for CI's two cores (old code runs in subprocesses,
# which leave one core idle in a single worker). loadscope: each test module (each class, for
# tests in classes) runs whole on one worker, so what a module computes once runs once: the
# batches of old scripts (one process per mode, cached per module in tests/old_code/) and
# tests/distribute's scenarios (a module fixture). Not loadgroup: on pytest 9.2 it silently stops
# grouping (pytest-dev/pytest-xdist#1386, open): every batch ran on both workers, twice.
WORKERS = ["-n", "2", "--dist", "loadscope"]

# The matrix's edges, where releases differ (docs/support.md, "Where releases differ"): the
# cells CI runs (`nox -t ci`) beside the anchors. TF 2.12 (the oldest Keras 2: sources at
# keras.*, its registry), Keras 3.0 (no trackable optimizers, no aggregation), Keras 3.1 (the
# DTypePolicy of 3.1-3.3), Keras 3.8 (3.5-3.8: float() works, aggregation from 3.7, iterations
# still the wrapper's own until 3.9). tf_keras runs in CI on TF 2.21 (`tests(tf221-tfkeras)`);
# tf_keras 2.16, whose difference was a crash of TensorFlow's that needs a process of its own (a
# test set-up, not Keras 2's behaviour), left CI on 2026-11-28 (268 s) and runs with the whole
# matrix (`nox -s matrix`) before a release.
CI_EDGES = (
    "tf212",
    "tf216-keras3.0",
    "tf216-keras3.1",
    "tf219-keras3.8",
    # The newest Python with the newest TensorFlow, as TF 2.21's users often run it.
    "py313-tf221",
)

# Test files whose outcome cannot depend on the backend: the codemod's tests that import neither
# TensorFlow nor the shim (the codemod reads and writes source text). They run on one anchor,
# tf221, not three times; a codemod test that imports tensorflow (at the top or through
# pytest.importorskip) or the shim is found by _backend_free() and runs on every anchor.
BACKEND_FREE_ANCHOR = "tf221"
_USES_THE_BACKEND = re.compile(
    r"^(?:import tensorflow|from tensorflow|\w+ = pytest\.importorskip\(\"tensorflow\"\)"
    r"|(?:from|import) compat_lso|from tests\.(?!codemods))",
    re.MULTILINE,
)
# Old scripts run end to end in fresh processes, two TensorFlow start-ups per test: about 70% of
# the compact set's time. They run on the oldest Keras 2 and Keras 3 releases (and on the
# anchors, the newest of each generation, tf_keras 2.21 included); the in-process old-code tests
# (install()) run on every cell.
SCRIPT_TESTS = (
    "tests/old_code/test_run_unmodified.py",
    "tests/old_code/test_tf24_scripts.py",
    # The corpus of training patterns (CI's `patterns` session, on TF 2.21).
    "tests/old_code/test_patterns.py",
    # `run -m`, the start-up hook's line in a site directory and the opt-out's command-line forms.
    "tests/old_code/test_command_forms.py",
)
# And TF 2.21 on Python 3.13, the CI edge of the newest Python: its old scripts under `run` and
# both migrations are what users of that Python run.
SCRIPT_CELLS = {"tf212", "tf216-keras3.0", "py313-tf221"}
PATTERN_CORPUS = "tests/old_code/test_patterns.py"
COMMAND_FORMS = "tests/old_code/test_command_forms.py"


def _scripts_left_out(cell: str) -> list[str]:
    """The files of SCRIPT_TESTS a script cell leaves out. The pattern corpus runs on the newest
    Keras 3 only (CI's `patterns` session): on Keras 3.0, test_tf24_scripts.py runs the keras3
    migration's output, and the corpus cost CI's run of 2026-11-28 200 of the edge's 300 s. The
    command-line forms are Python's plumbing (runpy, site, the environment a child inherits):
    they run where the Python differs (CELL_PYTHON: CI's py313-tf221 edge), on no anchor
    (SOME_ANCHORS)."""
    left_out = [PATTERN_CORPUS]
    if cell not in CELL_PYTHON:
        left_out.append(COMMAND_FORMS)
    return left_out


# What a cell runs beside COMPACT, or instead of part of it. TF 2.21 on Python 3.13: the codemod
# too (it parses with the running Python's `ast`).
EXTRA_PATHS = {"py313-tf221": ["tests/codemods"]}
LEFT_OUT_PATHS: dict[str, list[str]] = {}

# Files that crash TensorFlow on a cell when they share a process with other files: they run in
# a process of their own there, the rest of the cell's tests together. TF 2.16.2 + tf_keras
# 2.16.0: a segmentation fault in Python's garbage collector while TensorFlow traces Keras 2's
# own loss scale update (tests/shim/test_keras_port.py's checkpoint test, native class, after
# test_experimental, test_fit_parity and test_gradients ran in the same process); every file
# passes alone, and TF 2.17+ with tf_keras do not crash.
OWN_PROCESS = {"tf216-tfkeras": ["tests/shim/test_keras_port.py"]}
# Tests deselected on a cell, with the upstream crash that forces it: on TF 2.16.2 + tf_keras
# 2.16.0 the checkpoint test crashed again in CI's run of 2026-11-25 with test_keras_port.py in a
# process of its own (SIGSEGV in Python's garbage collector while TensorFlow traces Keras 2's own
# loss scale update, inside tf.function). It runs on every other cell, tf_keras 2.17-2.21 too.
UPSTREAM_CRASHES = {
    "tf216-tfkeras": [
        "tests/shim/test_keras_port.py::test_checkpoint_saves_and_restores_loss_scale_state"
    ]
}

RESULTS = pathlib.Path(".matrix")  # one JSON per cell, read by docs/scripts/support_table.py

QUIET_TF = {"TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": "-1"}

# Seconds of pytest per test session on the slow machine of CI's kind (2 cores; machines of one
# kind differ about 2x, docs/support.md says how these were set and measured). Each session
# prints its time beside its budget, and a warning when it passes it: never a failure, times are
# noisy, but the change that makes the suite grow shows it. MAKE_TEST's anchors add up to `make
# test`'s budget in .ci/run (15 minutes, with nox's own seconds per session).
SLOW_MACHINE_BUDGETS = {
    # Each with 30 s for the differential sample (tests/differential/test_sample.py: 37 s of CPU
    # on tf215 and on tf221, measured on a shared 2-core machine; one module on one xdist
    # worker, beside the other's tests). 330 + 510 s and nox's own seconds stay inside make test's.
    "tf215": 330,
    "tf221": 510,
    "tf221-tfkeras": 280,
    # 190 s, then 2 x 2 TensorFlow processes of `verify --before-python` (one on TF 2.15 each):
    # 70 s of wall clock, 45 s of CPU, on the shared 2 cores of the machine that measured it.
    "tf221-verify": 290,
    "tf221-patterns": 300,
    "tf212": 240,
    "tf216-keras3.0": 300,
    "tf216-keras3.1": 150,
    "tf219-keras3.8": 150,
    "tf216-tfkeras": 210,
    "py313-tf221": 300,
}


def _install(session: nox.Session, backend: str) -> dict[str, str]:
    deps, env = BACKENDS[backend]
    session.install(*deps, "-e", ".[test]")
    return {**QUIET_TF, **env}


@nox.session(python=PYTHON)
@nox.parametrize(
    "backend",
    [nox.param(b, id=b, tags=[] if b in MAKE_TEST else ["ci"]) for b in BACKENDS],
)
def tests(session: nox.Session, backend: str) -> None:
    """Run the test suite against one TensorFlow/Keras generation.

    The backend-free codemod tests run on BACKEND_FREE_ANCHOR only, some end-to-end files on some
    anchors (SOME_ANCHORS), and tf_keras runs the compact set and tf.distribute (ANCHOR_PATHS).
    """
    deps, env = BACKENDS[backend]
    once = [] if backend == BACKEND_FREE_ANCHOR else [f"--ignore={p}" for p in _backend_free()]
    once += [f"--ignore={p}" for p, anchors in SOME_ANCHORS.items() if backend not in anchors]
    _test_cell(
        session,
        backend,
        [*deps, "pytest-xdist"],
        env,
        tier=", ".join(
            (["compact and tf.distribute"] if backend in ANCHOR_PATHS else ["full"])
            + (["backend-free tests on tf221"] if backend != BACKEND_FREE_ANCHOR else [])
            + (["verify end to end in verify_e2e"] if backend == VERIFY_END_TO_END_ON else [])
            + (["the pattern corpus in patterns"] if backend == VERIFY_END_TO_END_ON else [])
            + (["the command forms on py313-tf221"] if backend == VERIFY_END_TO_END_ON else [])
        ),
        paths=ANCHOR_PATHS.get(backend, []),
        pytest_args=[*WORKERS, *once],
    )


# Test files outside tests/codemods whose outcome cannot depend on the backend either, named one
# by one (a subprocess can import TensorFlow where no import line shows it, so no pattern finds
# these): they read the sources and docs with `ast` and the codemod (the house rules, the docs
# pages), run pytest itself over generated modules (the xdist distribution), or compare saved
# configs with compat_lso.testing, which imports neither TensorFlow nor Keras (its own test says
# so). Each ran on every anchor before; they run on BACKEND_FREE_ANCHOR only.
BACKEND_FREE_FILES = (
    "tests/test_architecture.py",
    "tests/test_docs_pages.py",
    "tests/test_workers.py",
    "tests/testing/test_docs.py",
)


# End-to-end files that exercise the backend only through code other tests check on every
# anchor, run where their subject lives; each of their TensorFlow processes costs a slow machine
# about 10 s (a TensorFlow import alone is 5 s of CPU). `verify` runs two programs and compares
# their traces: the trace of each Keras generation's class is tests/trace's (every anchor), `run`
# is tests/old_code's (every anchor), the comparison is Python's. Its end-to-end checks of the
# pattern corpus migrate to Keras 3 and the shim (on Keras 2 the shim is Keras's own class, the
# same program twice): TF 2.21, in verify_e2e below, and on no anchor. Its wrong-migration file
# runs on Keras 3 (verify_e2e) and, for the right migration to the keras2 target only, on Keras 2
# (tf215; tf_keras is the same Keras 2 class again). The README's quick start is the demo's last
# step, which every anchor runs (tests/test_example_project.py): its own text is checked on
# tf221. `run -m`, the start-up hook's line in a site directory and install() first in a fresh
# process are Python's plumbing around the install every anchor runs.
SOME_ANCHORS: dict[str, tuple[str, ...]] = {
    "tests/verify/test_corpus.py": (),
    "tests/verify/test_end_to_end.py": (),
    "tests/verify/test_wrong_migrations.py": ("tf215",),
    # The old side on TF 2.15 itself, the new on TF 2.21: verify_e2e (TF 2.21) names the
    # tests(tf215) environment's Python (BEFORE_PYTHON_VARIABLE).
    "tests/verify/test_before_python.py": (),
    "tests/verify/test_gan_project.py": (),
    "tests/test_readme_quick_start.py": ("tf221",),
    "tests/old_code/test_command_forms.py": (),
    # The pattern corpus: CI's `patterns` session below, on TF 2.21.
    "tests/old_code/test_patterns.py": (),
    # tf.distribute's scenarios check each class against a NumPy reference and the trajectory
    # worked out by hand: Keras 3's shim on tf221, and Keras 2's classes (the reference's own
    # check) on tf_keras 2.21 in CI, the same Keras 2 code as TF 2.15's.
    "tests/distribute/test_distribute.py": ("tf221", "tf221-tfkeras"),
    "tests/distribute/test_official_loop.py": ("tf221", "tf221-tfkeras"),
}
# What an anchor runs when not the whole of tests/: tf_keras (in CI) runs the compact set and
# tf.distribute; the rest of the suite has no tf_keras-specific path that TF 2.15's Keras 2 and
# the compact set do not cover (the trace, verify, checkpoints and the CI helpers read Keras 2's
# classes through the same code on both).
ANCHOR_PATHS = {"tf221-tfkeras": [*COMPACT, "tests/distribute"]}

# verify's end-to-end runs of the pattern corpus, of the wrong migrations and of the GAN project
# on Keras 3: eighteen TensorFlow processes, over two minutes of a slow machine, which `make
# test`'s 15 minutes cannot hold beside the two anchors. CI runs them in a session of their own
# (`nox -s "verify_e2e"`, tagged ci); SOME_ANCHORS keeps them out of `tests(tf221)`. `make test`
# keeps verify end to end on every anchor (the demo's, tests/test_example_project.py), the
# README's quick start and, on TF 2.15, the right migration of the wrong-migrations file.
VERIFY_END_TO_END = [
    "tests/verify/test_corpus.py",
    "tests/verify/test_end_to_end.py",
    "tests/verify/test_wrong_migrations.py",
    "tests/verify/test_before_python.py",
    "tests/verify/test_gan_project.py",
]
VERIFY_END_TO_END_ON = "tf221"
# `verify --before-python`'s test runs the old code on TF 2.15 itself: the Python of the
# tests(tf215) environment, which `make test` (CI's first step) has made by then; no third
# environment is built for it. Without it (verify_e2e run alone) the test is skipped, named.
BEFORE_PYTHON_VARIABLE = "COMPAT_LSO_TF215_PYTHON"


@nox.session(python=PYTHON, tags=["ci"])
def verify_e2e(session: nox.Session) -> None:
    """Run verify's end-to-end files on TF 2.21 (VERIFY_END_TO_END), as CI does."""
    deps, env = BACKENDS[VERIFY_END_TO_END_ON]
    tf215 = Path(session.virtualenv.location).parent / "tests-tf215" / "bin" / "python"
    if tf215.exists():
        env = {**env, BEFORE_PYTHON_VARIABLE: str(tf215)}
    else:
        made_by = 'nox -s "tests(tf215)"'
        session.log(f"{tf215} is not made ({made_by} makes it): --before-python's test skips")
    _test_cell(
        session,
        f"{VERIFY_END_TO_END_ON}-verify",
        [*deps, "pytest-xdist"],
        env,
        tier="verify end to end",
        paths=VERIFY_END_TO_END,
        pytest_args=WORKERS,
    )


@nox.session(python=PYTHON, tags=["ci"])
def patterns(session: nox.Session) -> None:
    """Run the pattern corpus (tests/old_code/test_patterns.py) on TF 2.21, as CI does.

    Three processes run every script (`run --audit`, both migrations, `run --keep-native`): about
    half of `tests(tf221)`'s time, which `make test`'s 15 minutes cannot hold beside the anchors.
    """
    deps, env = BACKENDS[VERIFY_END_TO_END_ON]
    _test_cell(
        session,
        f"{VERIFY_END_TO_END_ON}-patterns",
        [*deps, "pytest-xdist"],
        env,
        tier="the pattern corpus",
        paths=[PATTERN_CORPUS],
        pytest_args=WORKERS,
    )


def _backend_free() -> list[str]:
    """Test files that import neither TensorFlow nor the shim: tests/codemods' (found by
    _USES_THE_BACKEND) and BACKEND_FREE_FILES."""
    files = sorted(pathlib.Path("tests/codemods").glob("test_*.py"))
    found = [str(f) for f in files if not _USES_THE_BACKEND.search(f.read_text(encoding="utf-8"))]
    return [*found, *BACKEND_FREE_FILES]


def _interpreter(version: str) -> str:
    """The CPython `version` to build a cell's environment with: pyenv's, where these machines
    keep 3.12 and 3.13 off PATH (pyenv's shims fail for a version that is not pyenv's global
    one), or else `version` itself, for nox and uv to find."""
    versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(
        versions.glob(f"{version}.*/bin/python{version}"),
        key=lambda path: [int(part) for part in path.parts[-3].split(".") if part.isdigit()],
    )
    return str(found[-1]) if found else version


@nox.session
@nox.parametrize(
    "python,cell",
    [
        nox.param(
            _interpreter(CELL_PYTHON[cell]) if cell in CELL_PYTHON else PYTHON,
            cell,
            id=cell,
            tags=["ci"] if cell in CI_EDGES else [],
        )
        for cell in MATRIX
    ],
)
def matrix(session: nox.Session, cell: str) -> None:
    """Run the compact set (COMPACT) against one more release line; see docs/support.md."""
    deps, env = MATRIX[cell]
    left_out = LEFT_OUT_PATHS.get(cell, [])
    paths = [path for path in COMPACT if pathlib.Path(path).exists() and path not in left_out]
    paths += EXTRA_PATHS.get(cell, [])
    left_out_scripts = _scripts_left_out(cell) if cell in SCRIPT_CELLS else SCRIPT_TESTS
    ignore = [f"--ignore={path}" for path in left_out_scripts]
    _test_cell(
        session,
        cell,
        [*deps, "pytest-xdist"],
        env,
        tier=_matrix_tier(cell),
        paths=paths,
        pytest_args=[*WORKERS, *ignore],
    )


def _matrix_tier(cell: str) -> str:
    """What a matrix cell ran, as docs/support.md's table says it."""
    parts = ["compact"]
    parts += [f"without {path}" for path in LEFT_OUT_PATHS.get(cell, [])]
    parts += [f"with {path}" for path in EXTRA_PATHS.get(cell, [])]
    if cell not in SCRIPT_CELLS:
        parts.append("no scripts")
    else:
        names = {PATTERN_CORPUS: "the pattern corpus", COMMAND_FORMS: "the command forms"}
        parts.append("scripts without " + " and ".join(names[p] for p in _scripts_left_out(cell)))
    return ", ".join(parts)


@nox.session(python=False)
def support_table(session: nox.Session) -> None:
    """Redraw the table in docs/support.md from the results in .matrix/ (no TensorFlow needed)."""
    session.run("python", "docs/scripts/support_table.py", *session.posargs)


# What the cell's environment holds, as the shim sees it (printed as one JSON line).
_VERSIONS = """
import json, platform
from importlib import metadata
from compat_lso import _backend
def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
print(json.dumps({
    "python": platform.python_version(),
    "tensorflow": version("tensorflow"),
    "keras": version("keras"),
    "tf_keras": version("tf-keras"),
    "tf.keras": f"{_backend.keras_package().__name__} {_backend.keras_version()}",
}))
"""


def _test_cell(
    session: nox.Session,
    cell: str,
    deps: list[str],
    env: dict[str, str],
    *,
    tier: str,
    paths: list[str],
    pytest_args: Sequence[str] = (),
) -> None:
    """Install the cell, run pytest on `paths` (all of tests/ when empty), record the outcome.

    The outcome goes to .matrix/<cell>.json only for a run without posargs: a developer's
    `nox -s "tests(tf221)" -- tests/shim -x` does not overwrite the record of the full run.
    """
    env = {**QUIET_TF, **env}
    started = time.monotonic()
    session.install(*deps, "-e", ".[test]")
    installed = time.monotonic()
    # CPU time says what the wall clock cannot on a shared machine: how long the tests take on
    # CI's otherwise idle 2 cores is at most this (TensorFlow keeps both cores busy at times).
    cpu_before = _children_cpu_seconds()
    record = not session.posargs
    RESULTS.mkdir(exist_ok=True)
    reports = []
    own = OWN_PROCESS.get(cell, [])
    deselect = [f"--deselect={test}" for test in UPSTREAM_CRASHES.get(cell, [])]
    runs = [[*paths, *(f"--ignore={path}" for path in own)], *([path] for path in own)]
    runs = [[*run, *deselect] for run in runs]
    failure = None
    for index, run in enumerate(runs):
        report = RESULTS / f"{cell}.{index}.xml"
        report.unlink(missing_ok=True)
        reports.append(report)
        try:
            session.run(
                "pytest", *pytest_args, *run, f"--junitxml={report}", *session.posargs, env=env
            )
        except nox.command.CommandFailed as error:
            failure = failure or error
    finished = time.monotonic()
    cpu = _children_cpu_seconds() - cpu_before
    _report_time(session, cell, finished - installed, cpu)
    slowest = _slowest_files(reports)
    for seconds, path in slowest:
        session.log(f"  {seconds:6.1f} s  {path}")
    printed = session.run("python", "-c", _VERSIONS, env=env, silent=True)
    if record and printed:  # nothing is printed under --install-only
        versions = json.loads(printed.strip().splitlines()[-1])
        result = {
            "cell": cell,
            "tier": tier,
            "paths": paths or ["tests"],
            "own_process": OWN_PROCESS.get(cell, []),
            "versions": versions,
            "tests": _count_outcomes(reports),
            "exit": "failed" if failure else "passed",
            "seconds": {
                "install": round(installed - started, 1),
                "tests": round(finished - installed, 1),
                "tests_cpu": round(cpu, 1),
            },
            "slowest_files": [[path, seconds] for seconds, path in slowest],
            "platform": f"{platform.system()} {platform.machine()}",
            "date": time.strftime("%Y-%m-%d"),
        }
        (RESULTS / f"{cell}.json").write_text(json.dumps(result, indent=2) + "\n")
    for report in reports:
        report.unlink(missing_ok=True)
    if failure:
        session.error(f"pytest failed on {cell}: {failure}")


def _report_time(session: nox.Session, cell: str, seconds: float, cpu: float) -> None:
    """Print the cell's test time beside its slow-machine budget; warn (only) when over it."""
    budget = SLOW_MACHINE_BUDGETS.get(cell)
    line = f"{cell}: tests took {seconds:.0f} s ({cpu:.0f} s of CPU)"
    if budget is None:
        session.log(line)
    elif seconds > budget:
        session.warn(f"{line}, over its budget of {budget} s on the slow CI machine")
    else:
        session.log(f"{line}; budget on the slow CI machine: {budget} s")


def _slowest_files(reports: list[pathlib.Path], count: int = 6) -> list[tuple[float, str]]:
    """The test files that took longest, summed over their tests (both workers' time, set-up and
    module fixtures included), from pytest's JUnit XML reports: where the session's time goes."""
    seconds: dict[str, float] = {}
    for report in reports:
        if not report.exists():
            continue
        for case in ET.parse(report).iter("testcase"):
            # "tests.old_code.test_patterns" or "tests.shim.test_x.SomeClass" -> the file
            parts = case.get("classname", "").split(".")
            while parts and not parts[-1].startswith("test_"):
                parts.pop()
            path = "/".join(parts) + ".py" if parts else "?"
            seconds[path] = seconds.get(path, 0.0) + float(case.get("time") or 0)
    ranked = sorted(((s, p) for p, s in seconds.items()), reverse=True)
    return [(round(s, 1), p) for s, p in ranked[:count]]


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _count_outcomes(reports: list[pathlib.Path]) -> dict[str, int]:
    """passed/failed/errors/skipped/xfailed, read from pytest's JUnit XML reports."""
    counts = dict.fromkeys(["passed", "failed", "errors", "skipped", "xfailed"], 0)
    for report in reports:
        if not report.exists():  # the process died before pytest wrote it
            counts["errors"] += 1
            continue
        for case in ET.parse(report).iter("testcase"):
            skipped = case.find("skipped")
            if case.find("failure") is not None:
                counts["failed"] += 1
            elif case.find("error") is not None:
                counts["errors"] += 1
            elif skipped is not None and skipped.get("type") == "pytest.xfail":
                counts["xfailed"] += 1
            elif skipped is not None:
                counts["skipped"] += 1
            else:
                counts["passed"] += 1
    return counts


# Keras 2.8's and tf-keras's own loss scale optimizer, policy and graph rewrite tests, run from
# local checkouts at their tags against compat_lso (docs/shim.md, "Upstream's tests"); nothing
# of them is kept here. Opt-in: each variable names a checkout's folder.
UPSTREAM_CHECKOUTS = {
    "COMPAT_LSO_UPSTREAM_KERAS": "--keras",  # keras-team/keras at v2.8.0
    "COMPAT_LSO_UPSTREAM_TF_KERAS": "--tf-keras",  # keras-team/tf-keras at v2.21.0
}


@nox.session(python=PYTHON)
@nox.parametrize("backend", list(BACKENDS), ids=list(BACKENDS))
def upstream_tests(session: nox.Session, backend: str) -> None:
    """Run Keras 2.8's and tf-keras's own tests against compat_lso (tests/upstream_adapter/).

    Opt-in, on each anchor: COMPAT_LSO_UPSTREAM_KERAS and COMPAT_LSO_UPSTREAM_TF_KERAS name local
    checkouts of keras-team/keras at v2.8.0 and keras-team/tf-keras at v2.21.0 (docs/shim.md
    says how to clone them); the session skips a checkout whose variable is unset.
    COMPAT_LSO_UPSTREAM_TARGET=native runs them against Keras 2's own classes instead.
    `nox -s "upstream_tests(tf215)" -- -k testCheckpoint` passes pytest's arguments on.
    """
    folders = {var: os.environ[var] for var in UPSTREAM_CHECKOUTS if os.environ.get(var)}
    unset = [var for var in UPSTREAM_CHECKOUTS if var not in folders]
    if not folders:
        session.skip(f"{' and '.join(unset)} unset: no checkout of upstream's tests to run")
    for var in unset:
        session.log(f"{var} unset: its checkout's tests are skipped")
    env = _install(session, backend)
    out = Path(session.create_tmp()) / "upstream"
    shutil.rmtree(out, ignore_errors=True)
    flags = [part for var, folder in folders.items() for part in (UPSTREAM_CHECKOUTS[var], folder)]
    session.run("python", "-m", "tests.upstream_adapter.sources", str(out), *flags, env=env)
    session.run(
        *(
            "python",
            "-m",
            "pytest",
            "-p",
            "tests.upstream_adapter.plugin",
            "-p",
            "no:cacheprovider",
        ),
        str(out),
        *session.posargs,
        env=env,
    )


@nox.session(python=PYTHON)
@nox.parametrize("backend", list(BACKENDS), ids=list(BACKENDS))
def demo(session: nox.Session, backend: str) -> None:
    """Train the bundled legacy example project through the shim."""
    env = _install(session, backend)
    session.run("python", "examples/run_demo.py", *session.posargs, env=env)


@nox.session(python=PYTHON)
@nox.parametrize("backend", list(BACKENDS), ids=list(BACKENDS))
def record(session: nox.Session, backend: str) -> None:
    """Write reference numbers: old-code scripts run natively (no compat_lso) on one backend.

    `nox -s "record(tf215)"` remakes the committed TF 2.15 references of the TF 2.4-2.15
    scripts; `nox -s "record(tf215)" -- --output FILE SCRIPT_OR_FOLDER...` records others
    (tests/old_code/record.py documents the options and the file).
    """
    env = _install(session, backend)
    arguments = session.posargs or [
        "--output",
        f"tests/old_code/references/tf24.{backend}.json",
        "tests/old_code/scripts/tf24",
    ]
    command = f'nox -s "record({backend})"'
    if session.posargs:
        command += " -- " + shlex.join(session.posargs)
    session.run("python", "-m", "tests.old_code.record", "--command", command, *arguments, env=env)


@nox.session(python=PYTHON)
@nox.parametrize("backend", list(BACKENDS), ids=list(BACKENDS))
def bench(session: nox.Session, backend: str) -> None:
    """Benchmarks that print ratios measured in one run (docs/performance.md has the figures)."""
    env = _install(session, backend)
    session.run("python", "bench/bench_import.py", env=env)
    session.run("python", "bench/bench_training_step.py", *session.posargs, env=env)
    if backend == "tf221-tfkeras":  # the codemod benchmark runs over the tf_keras sources
        session.run("python", "bench/bench_codemod.py", env=env)


@nox.session(python=PYTHON)
def bench_codemod(session: nox.Session) -> None:
    """The codemod's benchmarks, over the tf_keras sources (docs/performance.md, docs/codemod.md).

    `nox -s bench_codemod` runs bench_codemod.py, bench_codemod_scaling.py and bench_parsers.py
    with their defaults; `nox -s bench_codemod -- bench_parsers.py --files 40` runs one script
    with its arguments.
    """
    env = _install(session, "tf221-tfkeras")
    if session.posargs:
        script, *arguments = session.posargs
        session.run("python", f"bench/{Path(script).name}", *arguments, env=env)
        return
    for script in ("bench_codemod.py", "bench_codemod_scaling.py", "bench_parsers.py"):
        session.run("python", f"bench/{script}", env=env)


# -- fuzz: the codemod's property tests at 10,000 examples each ----------------------------------


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """Fuzz the codemod: its property tests under the `fuzz` hypothesis profile (no TensorFlow)."""
    session.install("-e", ".[test]")
    session.run(
        "pytest",
        "-p",
        "no:cacheprovider",
        "tests/codemods/test_codemod_properties.py",
        *session.posargs,
        env={**QUIET_TF, "HYPOTHESIS_PROFILE": "fuzz"},
    )


# -- differential: generated training programs, migrated and trained on both TensorFlows -------


@nox.session(python=PYTHON)
def differential(session: nox.Session) -> None:
    """Differential testing of the codemod (docs/differential.md): `nox -s differential -- --count
    N --seed S` generates N small training programs, migrates each on every target and trains it
    on TF 2.15 (the reference: the tests(tf215) environment's Python, or $COMPAT_LSO_TF215_PYTHON)
    and on the target's TensorFlow (TF 2.21 here); a difference no finding accounts for is a
    defect, shrunk. CI runs a fixed sample inside tests(tf215) and tests(tf221) instead."""
    deps, env = BACKENDS[VERIFY_END_TO_END_ON]
    session.install(*deps, "-e", ".[test]")
    tf215 = os.environ.get(BEFORE_PYTHON_VARIABLE) or str(
        Path(session.virtualenv.location).parent / "tests-tf215" / "bin" / "python"
    )
    if not Path(tf215).exists():
        session.error(f'{tf215} is not made: `nox -s "tests(tf215)"` makes it')
    session.run(
        "python",
        "-m",
        "tests.differential",
        *session.posargs,
        env={**QUIET_TF, **env, BEFORE_PYTHON_VARIABLE: tf215},
    )


# -- package: build, check and install as a user does ---------------------------------------------


@nox.session(python=PYTHON)
def package(session: nox.Session) -> None:
    """Build the sdist and the wheel, `twine check` them, check that each ships LICENSE, and
    install each into a bare venv.

    In each bare venv (plain `python -m venv` and pip, as a user has): both commands print the
    version, which must be `compat_lso.__version__` as the source says (single-sourced through
    setup.cfg's `attr:`, for the sdist too); `compat-lso-migrate --check` finds the bundled
    project's old code; with the `testing` extra, `compat-lso-check-config` compares two configs.
    """
    session.install("build>=1.2", "twine>=5")
    tmp = Path(session.create_tmp())
    dist = tmp / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.run("python", "-m", "build", "--outdir", str(dist), ".")
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        session.error(f"expected one wheel and one sdist in {dist}, got {wheels + sdists}")
    session.run("twine", "check", "--strict", *map(str, wheels + sdists))
    if not Path("LICENSE").is_file():
        session.error("no LICENSE file: setup.cfg's license_files names it")
    for artifact in (wheels[0], sdists[0]):
        if not _has_license(artifact, Path("LICENSE").read_bytes()):
            session.error(f"{artifact.name} does not ship LICENSE (setup.cfg's license_files)")
    version = re.search(
        r'^__version__ = "([^"]+)"', Path("compat_lso/__init__.py").read_text(), re.MULTILINE
    )
    if version is None:
        session.error("compat_lso/__init__.py has no __version__ line")
    for artifact in (wheels[0], sdists[0]):
        venv = tmp / f"venv-{artifact.suffix.lstrip('.')}"
        shutil.rmtree(venv, ignore_errors=True)
        session.run(sys.executable, "-m", "venv", str(venv), external=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        session.run(*pip, str(artifact), external=True)  # no extra: what every user gets
        for command in ("compat-lso-migrate", "compat-lso-check-config"):
            printed = session.run(
                str(venv / "bin" / command), "--version", external=True, silent=True
            )
            if printed != f"{command} {version[1]}\n":
                session.error(f"{command} --version printed {printed!r}, not {version[1]}")
        session.run(
            str(venv / "bin" / "compat-lso-migrate"),
            "--check",
            "examples/legacy_project",
            external=True,
            success_codes=[1],
        )
        _entry_points_outside_the_clone(session, venv, tmp / f"user-{artifact.suffix.lstrip('.')}")
        session.run(*pip, f"{artifact}[testing]", external=True)
        session.run(
            str(venv / "bin" / "compat-lso-check-config"),
            "tests/fixtures/configs/keras2_new_inner.json",
            "tests/fixtures/configs/keras3.json",
            external=True,
        )


def _has_license(artifact: Path, text: bytes) -> bool:
    """Whether the sdist has LICENSE at its top, or the wheel in its .dist-info (setuptools
    writes it at `licenses/LICENSE` from 77 on, at `LICENSE` before), with `text` in it."""
    if artifact.suffix == ".whl":
        with zipfile.ZipFile(artifact) as wheel:
            names = [
                name
                for name in wheel.namelist()
                if re.fullmatch(r"[^/]+\.dist-info/(licenses/)?LICENSE", name)
            ]
            return any(wheel.read(name) == text for name in names)
    with tarfile.open(artifact) as sdist:
        member = next(
            (
                m
                for m in sdist.getmembers()
                if m.name.count("/") == 1 and m.name.endswith("/LICENSE")
            ),
            None,
        )
        extracted = sdist.extractfile(member) if member is not None else None
        return extracted is not None and extracted.read() == text


# The modules docs/api.md documents (`::: compat_lso.x.Name`), found in a bare venv without
# TensorFlow: the module part of each is looked up, not imported (most import TensorFlow).
_FIND_DOCUMENTED = """
import importlib.util, re, sys
for target in re.findall(r"^::: ([\\w.]+)", open(sys.argv[1], encoding="utf-8").read(), re.M):
    parts, spec = target.split("."), None
    for end in range(1, len(parts) + 1):  # packages are imported on the way, modules are not
        try:
            found = importlib.util.find_spec(".".join(parts[:end]))
        except ModuleNotFoundError as error:  # a package that imports TensorFlow: it is there
            assert error.name == "tensorflow", error
            break
        if found is None:
            break
        spec = found
        if found.submodule_search_locations is None:
            break
    assert spec is not None and spec.origin.startswith(sys.prefix), f"{target}: {spec}"
    print("installed:", target, "in", spec.name)
"""


def _entry_points_outside_the_clone(session: nox.Session, venv: Path, work: Path) -> None:
    """What a user runs after `pip install`, from a folder of their own (never the clone, whose
    packages would shadow the installed ones): `python -m codemods`, the libcst codemod command
    as docs/codemod-ci.md sets it up, and the modules docs/api.md documents."""
    work = work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree("examples/legacy_project", work / "src")
    python = str((venv / "bin" / "python").absolute())
    with session.chdir(work):
        session.run(python, "-m", "codemods", "--version", external=True)
        session.run(python, "-m", "libcst.tool", "initialize", ".", external=True)
        config = Path(".libcst.codemod.yaml")
        config.write_text(
            re.sub(
                r"^modules:\n", "modules:\n- 'codemods.commands'\n", config.read_text(), flags=re.M
            )
        )
        session.run(
            python,
            *("-m", "libcst.tool", "codemod", "--no-format"),
            *("migrate_loss_scale.MigrateLossScaleCommand", "--target", "keras2", "src"),
            external=True,
        )
        if "import experimental" in (work / "src" / "train.py").read_text():
            session.error("python -m libcst.tool codemod left src/train.py unmigrated")
        api = str(Path(session.invoked_from) / "docs" / "api.md")
        session.run(python, "-c", _FIND_DOCUMENTED, api, external=True)


# -- mutation: do the tests notice a wrong codemod or update rule? -------------------------------

MUTMUT = "mutmut==3.8.1"


@nox.session(python=PYTHON)
def mutation(session: nox.Session) -> None:
    """Mutation testing with mutmut over codemods/, the Keras 3 class and the argument checks.

    The Keras 3 class is compat_lso/keras3/ (optimizer.py, update_rule.py, tf24_surface.py,
    native.py), the argument checks compat_lso/core/arguments.py. Runs on TF 2.21 (Keras 3,
    where compat_lso/keras3/ is the live backend); settings in pyproject.toml
    ([tool.mutmut]). Results are kept in mutants/ and reused: a re-run tests only mutants without
    a verdict. `nox -s mutation -- "codemods.rules*"` runs the mutants whose names match;
    `nox -s mutation -- results` lists the survivors. docs/testing-quality.md has the score.
    """
    env = _install(session, "tf221")
    session.install(MUTMUT)
    if session.posargs[:1] in (["results"], ["show"], ["export-cicd-stats"]):
        session.run("mutmut", *session.posargs, env=env)
        return
    session.run("mutmut", "run", "--max-children", "2", *session.posargs, env=env)
    session.run("mutmut", "export-cicd-stats", env=env)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the documentation with `mkdocs build --strict` (into site/).

    `nox -s docs -- serve` serves it instead. TensorFlow is not needed: the API reference is
    read from the source, and docs/img/loss_scale.png is committed (`nox -s plot` redraws it).
    """
    session.install("-e", ".[docs]")
    env = {"NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's end-of-life banner
    if session.posargs[:1] == ["serve"]:
        session.run("mkdocs", "serve", *session.posargs[1:], env=env)
    else:
        session.run("mkdocs", "build", "--strict", *session.posargs, env=env)


@nox.session(python=PYTHON)
def plot(session: nox.Session) -> None:
    """Redraw docs/img/loss_scale.png: a real training run through the shim on TF 2.21."""
    env = _install(session, "tf221")
    session.install("matplotlib>=3.8")
    session.run("python", "docs/scripts/plot_loss_scale.py", *session.posargs, env=env)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint and format) and mypy over compat_lso/ and codemods/ (scope in pyproject.toml)."""
    session.install("-e", ".[lint]")
    session.run("ruff", "check", *session.posargs)
    session.run("ruff", "format", "--check")
    session.run("mypy")
