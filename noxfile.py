"""Test sessions: the suite runs once per supported TensorFlow/Keras generation.

`nox` runs them all; `nox -s "tests(tf215)"` runs one. `nox -s docs` builds the documentation
(`mkdocs build --strict`), `nox -s lint` runs ruff and mypy; neither runs by default.
"""

from __future__ import annotations

import shlex

import nox

nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]

PYTHON = "3.11"

# Each entry is one Keras generation the shim must behave identically on.
BACKENDS = {
    # tf.keras is Keras 2 (keras 2.15).
    "tf215": (["tensorflow==2.15.1"], {}),
    # tf.keras is Keras 3.
    "tf221": (["tensorflow==2.21.0"], {}),
    # tf.keras is tf_keras, the Keras 2 line kept alive as a separate package.
    "tf221-tfkeras": (["tensorflow==2.21.0", "tf-keras==2.21.0"], {"TF_USE_LEGACY_KERAS": "1"}),
}

QUIET_TF = {"TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": "-1"}


def _install(session: nox.Session, backend: str) -> dict[str, str]:
    deps, env = BACKENDS[backend]
    session.install(*deps, "-e", ".[test]")
    return {**QUIET_TF, **env}


@nox.session(python=PYTHON)
@nox.parametrize("backend", list(BACKENDS), ids=list(BACKENDS))
def tests(session: nox.Session, backend: str) -> None:
    """Run the whole test suite against one TensorFlow/Keras generation."""
    env = _install(session, backend)
    session.run("pytest", *session.posargs, env=env)


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
