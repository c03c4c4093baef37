"""Test sessions: the suite runs once per supported TensorFlow/Keras generation.

`nox` runs them all; `nox -s "tests(tf215)"` runs one.
"""

from __future__ import annotations

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
def bench(session: nox.Session, backend: str) -> None:
    """Benchmarks that print ratios measured in one run (docs/performance.md has the figures)."""
    env = _install(session, backend)
    session.run("python", "bench/bench_import.py", env=env)
    session.run("python", "bench/bench_training_step.py", *session.posargs, env=env)
    if backend == "tf221-tfkeras":  # the codemod benchmark runs over the tf_keras sources
        session.run("python", "bench/bench_codemod.py", env=env)

# -- fuzz: the codemod's property tests at 10,000 examples each (a separate block, to merge easily) --


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """Fuzz the codemod: its property tests under the `fuzz` hypothesis profile (no TensorFlow needed)."""
    session.install("-e", ".[test]")
    session.run("pytest", "-p", "no:cacheprovider", "tests/codemods/test_codemod_properties.py", *session.posargs,
                env={**QUIET_TF, "HYPOTHESIS_PROFILE": "fuzz"})
