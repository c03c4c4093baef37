"""`compat-lso-check-config A B`: compare the LossScaleOptimizer configs saved in two files.

For CI: exit status 0 when they are equivalent, 1 when they differ (each difference printed as
`path: A's value != B's value`), 2 when a file cannot be read as a LossScaleOptimizer config.

Inputs, by file name suffix, none of them needing TensorFlow:

- `.json`, `.yaml` / `.yml` (YAML needs PyYAML, from the `testing` extra): a LossScaleOptimizer
  config in any historical form, a serialized optimizer `{"class_name": ..., "config": ...}`, or
  a saved model's `config.json`;
- `.keras`: a Keras saved model; the optimizer in its `config.json`'s `compile_config`;
- `.h5` / `.hdf5` (h5py, from the `testing` extra): a Keras HDF5 model; the optimizer in its
  `training_config`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compat_lso import __version__, testing

PROG = "compat-lso-check-config"

_SUFFIXES = ".json, .yaml, .yml, .keras, .h5 or .hdf5"

EXIT_EQUIVALENT = 0
EXIT_DIFFERENT = 1
EXIT_BAD_INPUT = 2

# The extra that installs what the command needs (deepdiff, PyYAML, h5py).
EXTRA_HINT = (
    "the 'testing' extra installs it: pip install \".[testing]\" from a clone of compat-lso, or "
    'pip install "compat-lso[testing] @ git+<repository URL>"'
)


class InputError(Exception):
    """A file that cannot be read as a LossScaleOptimizer config; the message names the file."""


def main(argv: Sequence[str] | None = None, *, prog: str = PROG) -> int:
    """Run the check; returns the exit status. `prog` is the command name shown in messages."""
    # argparse: the standard library's parser is all two paths and --help need.
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Compare the LossScaleOptimizer configs saved in two files.",
        epilog=(
            f"Files: {_SUFFIXES}. Exit status: {EXIT_EQUIVALENT} equivalent, {EXIT_DIFFERENT} "
            f"different (the differences are printed), {EXIT_BAD_INPUT} bad input. What is "
            "ignored, and why: docs/testing.md."
        ),
    )
    parser.add_argument("first", metavar="A", type=Path, help="a config file or saved model")
    parser.add_argument("second", metavar="B", type=Path, help="the one to compare it with")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    arguments = parser.parse_args(argv)  # usage errors exit with status 2 too

    try:
        first = _canonical(arguments.first)
        second = _canonical(arguments.second)
        differences = testing.config_differences(first, second)
    except (InputError, ImportError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if differences:
        names = (str(arguments.first), str(arguments.second))
        print(testing.failure_message(differences, names=names))
        return EXIT_DIFFERENT
    print(f"{arguments.first} and {arguments.second}: equivalent LossScaleOptimizer configs")
    return EXIT_EQUIVALENT


def load_optimizer_config(path: Path) -> Any:
    """The optimizer config saved in `path` (see the module docstring for the formats)."""
    if not path.is_file():
        raise InputError(f"{path}: {'is a directory' if path.is_dir() else 'no such file'}")
    suffix = path.suffix.lower()
    if suffix == ".keras":
        return _compiled_optimizer(path, _read_keras_archive(path))
    if suffix in (".h5", ".hdf5"):
        return _trained_optimizer(path, _read_hdf5_training_config(path))
    if suffix == ".json":
        document = _parse_json(path, _read_text(path))
    elif suffix in (".yaml", ".yml"):
        document = _parse_yaml(path, _read_text(path))
    else:
        raise InputError(
            f"{path}: unknown file type {suffix or '(no suffix)'!r}; expected {_SUFFIXES}"
        )
    if isinstance(document, dict) and "compile_config" in document:  # a .keras's config.json
        return _compiled_optimizer(path, document)
    if isinstance(document, dict) and "optimizer_config" in document:  # an .h5's training_config
        return _trained_optimizer(path, document)
    return document


def _canonical(path: Path) -> dict[str, Any]:
    config = load_optimizer_config(path)
    try:
        return testing.canonical_config(config)
    except testing.ConfigError as error:
        raise InputError(f"{path}: {error}") from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(
            f"{path}: cannot read it: {getattr(error, 'strerror', None) or error}"
        ) from None


def _parse_json(path: Path | str, text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{path}: not valid JSON: {error}") from None


def _parse_yaml(path: Path, text: str) -> Any:
    try:
        yaml = importlib.import_module("yaml")  # optional: PyYAML
    except ImportError:
        raise InputError(f"{path}: reading YAML needs PyYAML; {EXTRA_HINT}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise InputError(f"{path}: not valid YAML: {error}") from None


def _read_keras_archive(path: Path) -> Any:
    try:
        with zipfile.ZipFile(path) as archive:
            text = archive.read("config.json")
    except KeyError:
        raise InputError(f"{path}: no config.json inside; not a Keras saved model") from None
    except (OSError, zipfile.BadZipFile) as error:
        raise InputError(f"{path}: not a .keras archive (a zip file): {error}") from None
    return _parse_json(f"{path} (config.json)", text)


def _read_hdf5_training_config(path: Path) -> Any:
    try:
        h5py = importlib.import_module("h5py")  # the testing extra; TensorFlow installs it too
    except ImportError:
        raise InputError(f"{path}: reading .h5 models needs h5py; {EXTRA_HINT}") from None
    try:
        with h5py.File(path, "r") as file:
            training_config = file.attrs.get("training_config")
    except OSError as error:
        raise InputError(f"{path}: not an HDF5 file: {error}") from None
    if training_config is None:
        raise InputError(
            f"{path}: the model has no training_config, so no optimizer: it was saved before "
            "compile() or with include_optimizer=False"
        )
    return _parse_json(f"{path} (training_config)", training_config)


def _compiled_optimizer(path: Path, model_config: Any) -> Any:
    """The optimizer in a saved model's config (`config.json` in a .keras archive)."""
    compile_config = model_config.get("compile_config") if isinstance(model_config, dict) else None
    optimizer = compile_config.get("optimizer") if isinstance(compile_config, dict) else None
    if optimizer is None:
        raise InputError(
            f"{path}: the model's compile_config has no optimizer: it was saved before compile()"
        )
    return optimizer


def _trained_optimizer(path: Path, training_config: Any) -> Any:
    """The optimizer in an HDF5 model's `training_config`."""
    optimizer = (
        training_config.get("optimizer_config") if isinstance(training_config, dict) else None
    )
    if optimizer is None:
        raise InputError(f"{path}: the model's training_config has no optimizer_config")
    return optimizer


if __name__ == "__main__":
    sys.exit(main())
