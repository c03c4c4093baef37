"""Test sessions: the suite runs once per supported TensorFlow/Keras generation.

`nox` runs them all; `nox -s "tests(tf215)"` runs one. `nox -s docs` builds the documentation
(`mkdocs build --strict`), `nox -s lint` runs ruff and mypy, `nox -s package` builds and checks
the sdist and the wheel; none of them runs by default.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

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


# -- package: build, check and install as a user does ---------------------------------------------


@nox.session(python=PYTHON)
def package(session: nox.Session) -> None:
    """Build the sdist and the wheel, `twine check` them, and install each into a bare venv.

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
        session.run(*pip, f"{artifact}[testing]", external=True)
        session.run(
            str(venv / "bin" / "compat-lso-check-config"),
            "tests/fixtures/configs/keras2_new_inner.json",
            "tests/fixtures/configs/keras3.json",
            external=True,
        )


# -- mutation: do the tests notice a wrong codemod or update rule? -------------------------------

MUTMUT = "mutmut==3.8.1"


@nox.session(python=PYTHON)
def mutation(session: nox.Session) -> None:
    """Mutation testing with mutmut over codemods/ and compat_lso/_keras3.py, _arguments.py.

    Runs on TF 2.21 (Keras 3, where _keras3.py is the live backend); settings in pyproject.toml
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
