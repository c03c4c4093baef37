"""`compat-lso-check-config A B` on real files: configs, YAML, models saved by this TensorFlow."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import warnings
import zipfile

import pytest
import tensorflow as tf

import compat_lso
from compat_lso.testing import check_config as _check_config

CONFIGS = pathlib.Path(__file__).parent.parent / "fixtures" / "configs"
ROOT = pathlib.Path(__file__).parent.parent.parent
KERAS3_JSON = CONFIGS / "keras3.json"
TF23_DYNAMIC = CONFIGS / "tf23_dynamic.json"


def check_config(*arguments: object, python: str = "") -> subprocess.CompletedProcess[str]:
    """Run the CLI in a fresh interpreter, as CI would, and check it left TensorFlow alone.

    `python`, if given, replaces the line that imports `main`.
    """
    runner = python or "from compat_lso.testing.check_config import main"
    script = (
        f"import sys\n{runner}\nstatus = main(sys.argv[1:])\n"
        "assert 'tensorflow' not in sys.modules, 'the CLI imported TensorFlow'\n"
        "sys.exit(status)"
    )
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, arguments)],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
        timeout=120,
    )


def save_model(path: pathlib.Path, optimizer: object | None) -> pathlib.Path:
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    if optimizer is not None:
        model.compile(optimizer=optimizer, loss="mse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "HDF5 ... is considered legacy"
        model.save(path)
    return path


@pytest.fixture(scope="module")
def saved_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    """Models saved by the running TensorFlow with the fixtures' optimizer, and one variation."""
    directory = tmp_path_factory.mktemp("models")

    def optimizer(learning_rate: float) -> object:
        sgd = tf.keras.optimizers.SGD(learning_rate, momentum=0.9)
        return compat_lso.LossScaleOptimizer(sgd, initial_scale=64, dynamic_growth_steps=10)

    return {
        "keras": save_model(directory / "model.keras", optimizer(0.5)),
        "h5": save_model(directory / "model.h5", optimizer(0.5)),
        "keras-lr-0.1": save_model(directory / "lr.keras", optimizer(0.1)),
        "uncompiled": save_model(directory / "uncompiled.keras", None),
    }


# -- Through a subprocess, as in CI ---------------------------------------------------------


def test_equivalent_configs_exit_0():
    result = check_config(TF23_DYNAMIC, KERAS3_JSON)
    assert (result.returncode, result.stderr) == (0, "")
    assert (
        result.stdout
        == f"{TF23_DYNAMIC} and {KERAS3_JSON}: equivalent LossScaleOptimizer configs\n"
    )


def test_different_configs_exit_1_and_print_each_difference():
    result = check_config(CONFIGS / "tf23_fixed.json", CONFIGS / "keras2_fixed.json")
    assert result.returncode == 0, result.stdout  # the same Adam, fixed at 128
    result = check_config(CONFIGS / "keras2_fixed.json", KERAS3_JSON)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        (
            "LossScaleOptimizer configs are not equivalent "
            f"({CONFIGS / 'keras2_fixed.json'} != {KERAS3_JSON}):"
        ),
        "  dynamic: False != True",
        "  dynamic_growth_steps: None != 10",
        "  initial_scale: 128 != 64",
        "  inner_optimizer.class_name: 'Adam' != 'SGD'",
        "  inner_optimizer.config.learning_rate: 0.001 != 0.5",
    ]


@pytest.mark.parametrize("model, fixture", [("keras", "tf23_dynamic.json"), ("h5", "keras3.json")])
def test_a_model_saved_by_this_tensorflow_is_read_without_tensorflow(saved_models, model, fixture):
    result = check_config(saved_models[model], CONFIGS / fixture)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_saved_model_with_another_learning_rate_differs(saved_models):
    result = check_config(saved_models["keras"], saved_models["keras-lr-0.1"])
    assert result.returncode == 1
    assert result.stdout.splitlines()[1:] == ["  inner_optimizer.config.learning_rate: 0.5 != 0.1"]


def test_yaml_configs_are_read(tmp_path):
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "keras3.yaml"
    path.write_text(yaml.safe_dump(json.loads(KERAS3_JSON.read_text())))
    result = check_config(path, TF23_DYNAMIC)
    assert result.returncode == 0, result.stdout + result.stderr


def test_yaml_without_pyyaml_is_bad_input_that_says_what_to_install(tmp_path):
    path = tmp_path / "config.yml"
    path.write_text("inner_optimizer: {}\n")
    blocked = (
        "sys.modules['yaml'] = None  # as if PyYAML were not installed\n"
        "from compat_lso.testing.check_config import main"
    )
    result = check_config(path, KERAS3_JSON, python=blocked)
    assert result.returncode == 2
    assert result.stderr == (
        f"compat-lso-check-config: error: {path}: reading YAML needs PyYAML; "
        f"{_check_config.EXTRA_HINT}\n"
    )
    assert "'testing' extra" in result.stderr


def test_h5_without_h5py_is_bad_input_that_names_the_extra(tmp_path):
    path = tmp_path / "model.h5"
    path.write_bytes(b"not read: h5py is missing")
    blocked = (
        "sys.modules['h5py'] = None  # as if h5py were not installed\n"
        "from compat_lso.testing.check_config import main"
    )
    result = check_config(path, KERAS3_JSON, python=blocked)
    assert result.returncode == 2
    assert result.stderr == (
        f"compat-lso-check-config: error: {path}: reading .h5 models needs h5py; "
        f"{_check_config.EXTRA_HINT}\n"
    )


def test_version_prints_the_package_version():
    result = check_config("--version")
    assert (result.returncode, result.stdout) == (
        0,
        f"compat-lso-check-config {compat_lso.__version__}\n",
    )


def test_a_missing_file_exits_2_naming_it(tmp_path):
    result = check_config(tmp_path / "absent.json", KERAS3_JSON)
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr
        == f"compat-lso-check-config: error: {tmp_path / 'absent.json'}: no such file\n"
    )


def test_a_usage_error_exits_2():
    result = check_config(KERAS3_JSON)
    assert result.returncode == 2
    assert "the following arguments are required: B" in result.stderr


@pytest.fixture(scope="module")
def mixed_precision_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    """A model compiled with a plain SGD under mixed_float16, which Keras wraps in compile()."""
    directory = tmp_path_factory.mktemp("mixed")
    previous = tf.keras.mixed_precision.global_policy()
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        return {
            suffix: save_model(directory / f"model.{suffix}", tf.keras.optimizers.SGD(0.5))
            for suffix in ("keras", "h5")
        }
    finally:
        tf.keras.mixed_precision.set_global_policy(previous)


def test_an_h5_model_records_the_loss_scale_optimizer_keras_wrapped_around_a_plain_one(
    mixed_precision_models, tmp_path, capsys
):
    # TF 2.3's LossScaleOptimizer(SGD(0.5), "dynamic"): the defaults Keras wraps with.
    defaults = tmp_path / "tf23_defaults.json"
    dynamic = {"initial_loss_scale": 32768.0, "increment_period": 2000, "multiplier": 2.0}
    sgd_config = {
        "name": "SGD",
        "learning_rate": 0.5,
        "decay": 0.0,
        "momentum": 0.0,
        "nesterov": False,
    }
    sgd = {"class_name": "SGD", "config": sgd_config}
    config = {"optimizer": sgd, "loss_scale": {"class_name": "DynamicLossScale", "config": dynamic}}
    defaults.write_text(json.dumps(config))
    assert _check_config.main([str(mixed_precision_models["h5"]), str(defaults)]) == 0, (
        capsys.readouterr()
    )


def test_a_keras_archive_records_the_plain_optimizer_passed_to_compile(
    mixed_precision_models, capsys
):
    assert _check_config.main([str(mixed_precision_models["keras"]), str(KERAS3_JSON)]) == 2
    assert (
        "expected a LossScaleOptimizer, but the serialized object is a 'SGD'"
        in capsys.readouterr().err
    )


# -- In process: every combination, every kind of bad input ---------------------------------


@pytest.mark.parametrize(
    "fixture",
    ["tf23_dynamic.json", "keras2_legacy_inner.json", "keras2_new_inner.json", "keras3.json"],
)
@pytest.mark.parametrize("model", ["keras", "h5"])
def test_a_saved_model_matches_the_config_each_generation_wrote(
    saved_models, capsys, model, fixture
):
    assert _check_config.main([str(saved_models[model]), str(CONFIGS / fixture)]) == 0, (
        capsys.readouterr()
    )


def write(path: pathlib.Path, content: str | bytes) -> pathlib.Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def zip_with(path: pathlib.Path, members: dict[str, str]) -> pathlib.Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def hdf5_without_training_config(path: pathlib.Path) -> pathlib.Path:
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "w") as file:
        file.attrs["model_config"] = "{}"
    return path


BAD_INPUTS = {
    "directory": (lambda d: d, "is a directory"),
    "unknown-suffix": (
        lambda d: write(d / "config.txt", "{}"),
        "unknown file type '.txt'; expected .json",
    ),
    "invalid-json": (
        lambda d: write(d / "config.json", "{'single': 'quotes'}"),
        "not valid JSON: Expecting property name",
    ),
    "json-list": (
        lambda d: write(d / "config.json", "[1, 2]"),
        "expected a LossScaleOptimizer or its config (a dict), but got [1, 2]",
    ),
    "not-an-lso": (
        lambda d: write(
            d / "sgd.json", json.dumps({"class_name": "SGD", "config": {"learning_rate": 0.1}})
        ),
        "expected a LossScaleOptimizer, but the serialized object is a 'SGD'",
    ),
    "bad-lso-config": (
        lambda d: write(
            d / "lso.json",
            json.dumps(
                {"inner_optimizer": {"class_name": "SGD", "config": {}}, "initial_scale": "dynamic"}
            ),
        ),
        'not a valid LossScaleOptimizer config: "initial_scale" must be a positive int or float',
    ),
    "keras-not-a-zip": (
        lambda d: write(d / "model.keras", b"not a zip"),
        "not a .keras archive (a zip file)",
    ),
    "keras-without-config": (
        lambda d: zip_with(d / "model.keras", {"metadata.json": "{}"}),
        "no config.json inside",
    ),
    "keras-invalid-config": (
        lambda d: zip_with(d / "model.keras", {"config.json": "{"}),
        "model.keras (config.json): not valid JSON",
    ),
    "h5-not-hdf5": (lambda d: write(d / "model.h5", b"not hdf5"), "not an HDF5 file"),
    "h5-uncompiled": (
        lambda d: hdf5_without_training_config(d / "model.h5"),
        "the model has no training_config",
    ),
    "compile-config-without-optimizer": (
        lambda d: write(
            d / "config.json", json.dumps({"compile_config": {"loss": "mse", "optimizer": None}})
        ),
        "the model's compile_config has no optimizer",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_with_a_message_naming_the_file(tmp_path, capsys, case):
    make, message = BAD_INPUTS[case]
    path = make(tmp_path)
    assert _check_config.main([str(path), str(KERAS3_JSON)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"compat-lso-check-config: error: {path}")
    assert message in captured.err


def test_an_uncompiled_saved_model_exits_2(saved_models, capsys):
    assert _check_config.main([str(saved_models["uncompiled"]), str(KERAS3_JSON)]) == 2
    assert "compile_config has no optimizer" in capsys.readouterr().err


def test_the_second_file_is_checked_too(tmp_path, capsys):
    path = write(tmp_path / "config.json", "[]")
    assert _check_config.main([str(KERAS3_JSON), str(path)]) == 2
    assert f"error: {path}: expected a LossScaleOptimizer or its config" in capsys.readouterr().err


def test_prog_names_the_command_in_messages(tmp_path, capsys):
    assert (
        _check_config.main(
            [str(tmp_path / "absent.json"), str(KERAS3_JSON)],
            prog="python -m compat_lso check-config",
        )
        == 2
    )
    assert capsys.readouterr().err.startswith("python -m compat_lso check-config: error: ")
