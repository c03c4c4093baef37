"""Upstream's test files, taken from local checkouts and given the adapter's imports.

Nothing of upstream's is kept in this repository: `nox -s upstream_tests` reads each file from
a checkout named by an environment variable, checks it is the file of the tag below (its git
blob id), and writes it into a folder of the session's, where pytest runs it with the adapter
(`-p tests.upstream_adapter.plugin`). Only the imports change: each name upstream imports from
Keras is bound to the object of that name in `support.py` (the class under test on this backend,
Keras's test utilities where the installed Keras lacks them). The one helper the tests take from
Keras's `mixed_precision/test_util.py` (`create_identity_with_grad_check_fn`, an identity whose
gradient asserts its value) is copied from the same checkout into that folder, as its own module.

`python -m tests.upstream_adapter.sources OUT [--keras PATH] [--tf-keras PATH]` writes them;
imports no TensorFlow.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

ADAPTER = "tests.upstream_adapter.support"
HELPER = "create_identity_with_grad_check_fn"


@dataclass(frozen=True)
class Checkout:
    """A repository at a tag, as a developer clones it (docs/shim.md, Upstream's tests)."""

    variable: str  # the environment variable naming the checkout's folder
    repository: str
    tag: str
    commit: str
    package: str  # the top-level package its tests import: keras or tf_keras
    test_util: str  # path of mixed_precision/test_util.py in the checkout
    test_util_blob: str


@dataclass(frozen=True)
class TestFile:
    checkout: Checkout
    path: str  # in the checkout
    blob: str  # git blob id of the file at the tag
    generated: str  # the name it runs under (expectations.py matches these)
    loss_scales: str  # which support namespace `tf.mixed_precision.experimental` is


KERAS = Checkout(
    "COMPAT_LSO_UPSTREAM_KERAS",
    "https://github.com/keras-team/keras",
    "v2.8.0",
    "d8fcb9d4d4dad45080ecfdd575483653028f8eda",
    "keras",
    "keras/mixed_precision/test_util.py",
    "c67018a78b5508b59c630305afcfdf57867c8690",
)
TF_KERAS = Checkout(
    "COMPAT_LSO_UPSTREAM_TF_KERAS",
    "https://github.com/keras-team/tf-keras",
    "v2.21.0",  # the test file is the same blob from v2.15.0 on
    "631ed411d9e55e40b1ecaae7b046bba14752f46e",
    "tf_keras",
    "tf_keras/mixed_precision/test_util.py",
    "ecc4bca5b725cae4f999b391409db2fc8624b547",
)
CHECKOUTS = (KERAS, TF_KERAS)

TEST_FILES = (
    TestFile(
        KERAS,
        "keras/mixed_precision/loss_scale_optimizer_test.py",
        "d07e0d71b5f4565e0e0ae47c9ae1c71c3dd4af65",
        "test_keras28_loss_scale_optimizer.py",
        "tf_loss_scales",
    ),
    TestFile(
        KERAS,
        "keras/mixed_precision/policy_test.py",
        "00a5f856117a9f6a947fd5e423adb1166b009623",
        "test_keras28_policy.py",
        "compat_loss_scales",
    ),
    TestFile(
        KERAS,
        "keras/mixed_precision/mixed_precision_graph_rewrite_test.py",
        "e2f707c0b39d6362a3a1be435f0aae9bf1528226",
        "test_keras28_mixed_precision_graph_rewrite.py",
        "tf_loss_scales",
    ),
    TestFile(
        TF_KERAS,
        "tf_keras/mixed_precision/loss_scale_optimizer_test.py",
        "5b740073693a0370a1155c5545db0d5b7f17398d",
        "test_tf_keras_loss_scale_optimizer.py",
        "tf_loss_scales",
    ),
)

# `from <package>.<module> import <name>` -> the support.py name it is bound to, for both
# packages' layouts (Keras 2.8: keras.optimizer_v2; tf-keras: tf_keras.optimizers.legacy).
IMPORTS = {
    ("", "combinations"): "combinations",
    ("", "optimizers"): "optimizers",
    ("", "testing_utils"): "testing_utils",
    ("", "keras_parameterized"): "keras_parameterized",
    ("engine", "base_layer_utils"): "base_layer_utils",
    ("mixed_precision", "loss_scale_optimizer"): "loss_scale_optimizer",
    ("mixed_precision", "policy"): "mp_policy",
    ("mixed_precision", "device_compatibility_check"): "device_compatibility_check",
    ("optimizer_experimental", "optimizer"): "optimizer_experimental",
    ("optimizer_experimental", "sgd"): "sgd_experimental",
    ("optimizer_v2", "adam"): "adam",
    ("optimizer_v2", "gradient_descent"): "gradient_descent",
    ("optimizer_v2", "optimizer_v2"): "optimizer_v2",
    ("optimizers", "adam"): "adam_experimental",
    ("optimizers", "optimizer"): "optimizer_experimental",
    ("optimizers", "sgd"): "sgd_experimental",
    ("optimizers.legacy", "adam"): "adam",
    ("optimizers.legacy", "gradient_descent"): "gradient_descent",
    ("optimizers.legacy", "optimizer_v2"): "optimizer_v2",
    ("optimizers.schedules", "learning_rate_schedule"): "learning_rate_schedule",
    ("testing_infra", "test_combinations"): "test_combinations",
    ("testing_infra", "test_utils"): "test_utils",
}


class SourceError(Exception):
    """A checkout that is not the one the adapter was written for."""


def blob_id(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _read(checkout: Checkout, folder: Path, path: str, blob: str) -> str:
    file = folder / path
    if not file.is_file():
        raise SourceError(
            f"{checkout.variable}={folder}: no {path} there; clone {checkout.repository} at "
            f"{checkout.tag} (docs/shim.md, Upstream's tests)"
        )
    data = file.read_bytes()
    if blob_id(data) != blob:
        raise SourceError(
            f"{checkout.variable}={folder}: {path} is not the file of {checkout.tag} (git blob "
            f"{blob_id(data)[:12]}, expected {blob[:12]}); check out {checkout.tag} there"
        )
    return data.decode("utf-8")


def _helper_module(checkout: Checkout, folder: Path) -> str:
    """The grad-check helper from the checkout's test_util.py, as a module of its own."""
    source = _read(checkout, folder, checkout.test_util, checkout.test_util_blob)
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == HELPER:
            body = "\n".join(source.splitlines()[node.lineno - 1 : node.end_lineno])
            return f"import tensorflow.compat.v2 as tf\n\n\n{body}\n"
    raise SourceError(f"{checkout.test_util} at {checkout.tag} has no {HELPER}")


def _import_lines(node: ast.stmt, test_file: TestFile, helper: str) -> list[str] | None:
    """What replaces one of upstream's import statements, or None to keep it."""
    package = test_file.checkout.package
    if isinstance(node, ast.Import):
        if [(a.name, a.asname) for a in node.names] == [("tensorflow.compat.v2", "tf")]:
            return [f"tf = _adapter.tensorflow_with(_adapter.{test_file.loss_scales})"]
        return None
    if not isinstance(node, ast.ImportFrom) or node.module is None:
        return None
    if node.module != package and not node.module.startswith(package + "."):
        return None  # TensorFlow's own modules, absl, numpy, the standard library: as they are
    module = node.module[len(package) + 1 :]
    lines = []
    for alias in node.names:
        bound = alias.asname or alias.name
        if (module, alias.name) == ("mixed_precision", "test_util"):
            lines.append(f"import {helper} as {bound}")
            continue
        name = IMPORTS.get((module, alias.name))
        if name is None:
            raise SourceError(
                f"{test_file.path}: no adapter for `from {node.module} import {alias.name}`"
            )
        lines.append(f"{bound} = _adapter.{name}")
    return lines


def adapted(test_file: TestFile, source: str, helper: str) -> str:
    """`source` with each of its Keras imports bound to the adapter's object of that name."""
    lines = source.splitlines()
    replaced: dict[int, tuple[int, list[str]]] = {}
    for node in ast.parse(source).body:
        new = _import_lines(node, test_file, helper)
        if new is not None:
            replaced[node.lineno - 1] = (node.end_lineno or node.lineno, new)
    if not replaced:
        raise SourceError(f"{test_file.path}: no Keras import to adapt")
    first = min(replaced)
    out = [
        f"# Generated by tests/upstream_adapter from {test_file.checkout.repository} "
        f"{test_file.checkout.tag}, {test_file.path}: only the imports changed. Not to be "
        "committed.",
        *lines[:first],
        f"from {ADAPTER.rsplit('.', 1)[0]} import support as _adapter",
    ]
    index = first
    while index < len(lines):
        if index in replaced:
            end, new = replaced[index]
            out.extend(new)
            index = end
        else:
            out.append(lines[index])
            index += 1
    return "\n".join(out) + "\n"


def write(out: Path, folders: dict[str, Path]) -> list[str]:
    """Write the test files of the checkouts in `folders` (variable -> folder) into `out`.

    Returns the generated files' names."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for checkout in CHECKOUTS:
        folder = folders.get(checkout.variable)
        if folder is None:
            continue
        helper = f"{checkout.package}_test_util"
        (out / f"{helper}.py").write_text(_helper_module(checkout, folder), encoding="utf-8")
        for test_file in TEST_FILES:
            if test_file.checkout is checkout:
                source = _read(checkout, folder, test_file.path, test_file.blob)
                text = adapted(test_file, source, helper)
                (out / test_file.generated).write_text(text, encoding="utf-8")
                written.append(test_file.generated)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.upstream_adapter.sources")
    parser.add_argument("out", type=Path, help="folder to write the adapted test files into")
    parser.add_argument("--keras", type=Path, help=f"{KERAS.repository} at {KERAS.tag}")
    parser.add_argument("--tf-keras", type=Path, help=f"{TF_KERAS.repository} at {TF_KERAS.tag}")
    arguments = parser.parse_args(argv)
    folders = {KERAS.variable: arguments.keras, TF_KERAS.variable: arguments.tf_keras}
    try:
        written = write(arguments.out, {k: v for k, v in folders.items() if v is not None})
    except SourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {', '.join(written) or 'nothing'} into {arguments.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
