"""`assert_config_equivalent` on configs: what is equal, what differs, and what it says.

These tests use configs only (the fixtures in tests/fixtures/configs/ were written by the real
classes of each generation) and so need no TensorFlow; test_optimizers.py compares live objects.
"""

from __future__ import annotations

import copy
import itertools
import json
import pathlib
import struct
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compat_lso.testing import (
    ConfigError,
    assert_config_equivalent,
    canonical_config,
    config_differences,
)

CONFIGS = pathlib.Path(__file__).parent.parent / "fixtures" / "configs"
ROOT = pathlib.Path(__file__).parent.parent.parent

# The same optimizer as written by TF 2.1-2.3, Keras 2 (legacy and new inner optimizer) and
# Keras 3 (3.12+, and 3.0-3.11 with the base optimizer's keys): SGD(0.5, momentum=0.9), initial
# scale 64, growth every 10 steps.
DYNAMIC = [
    "tf23_dynamic.json",
    "keras2_legacy_inner.json",
    "keras2_new_inner.json",
    "keras3.json",
    "keras3_0.json",
]
# Adam(0.001) with a fixed scale of 128, by TF 2.1-2.3 and Keras 2.
FIXED = ["tf23_fixed.json", "keras2_fixed.json"]


def load(name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((CONFIGS / name).read_text())
    return config


def changed(fixture: str, /, **changes: Any) -> dict[str, Any]:
    """The fixture with `changes` applied: keys are paths joined by `__`; DELETE removes a key."""
    config = copy.deepcopy(load(fixture))
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        target = config
        for key in parents:
            target = target[key]
        if value is DELETE:
            del target[last]
        else:
            target[last] = value
    return config


DELETE = object()
INNER = "inner_optimizer__config__"


def next_float32_up(value: float) -> float:
    (bits,) = struct.unpack("<I", struct.pack("<f", value))
    (result,) = struct.unpack("<f", struct.pack("<I", bits + 1))
    return float(result)


# -- Equivalent -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "first, second",
    [*itertools.combinations(DYNAMIC, 2), *itertools.combinations(FIXED, 2)],
)
def test_configs_of_one_optimizer_written_by_every_generation_are_equivalent(first, second):
    assert_config_equivalent(load(first), load(second))
    assert_config_equivalent(load(second), load(first))


@pytest.mark.parametrize(
    "serialized",
    [
        {"class_name": "LossScaleOptimizer", "module": "keras.optimizers", "registered_name": None},
        {"class_name": "LossScaleOptimizerV3", "registered_name": "LossScaleOptimizerV3"},
        {"class_name": "LossScaleOptimizer", "registered_name": "compat_lso>LossScaleOptimizer"},
        {"class_name": "compat_lso.experimental>LossScaleOptimizer"},  # as Keras 2 writes to .h5
    ],
    ids=["keras3", "keras2-v3", "compat_lso", "experimental-h5"],
)
def test_a_serialized_optimizer_is_its_config_whichever_class_wrote_it(serialized):
    assert_config_equivalent(
        {**serialized, "config": load("keras3.json")}, load("keras2_legacy_inner.json")
    )


@pytest.mark.parametrize(
    "name",
    ["SGD", "sgd", "sgd_1", "sgd_12", None],
    ids=["keras2-default", "keras3-default", "keras3-second", "keras3-twelfth", "unnamed"],
)
def test_keras_generated_inner_optimizer_names_are_ignored(name):
    assert_config_equivalent(
        changed("keras3.json", **{INNER + "name": name}), load("keras2_new_inner.json")
    )


def test_generated_names_follow_the_class_as_keras_3_spells_it():
    # Keras 3 snake-cases RMSprop as `rm_sprop`; Keras 2 names it `RMSprop`.
    first = {"inner_optimizer": {"class_name": "RMSprop", "config": {"name": "rm_sprop_3"}}}
    second = {"inner_optimizer": {"class_name": "RMSprop", "config": {"name": "RMSprop"}}}
    assert_config_equivalent(first, second)


@pytest.mark.parametrize("name", ["loss_scale_optimizer", "loss_scale_optimizer_2"])
def test_keras_generated_loss_scale_optimizer_names_are_ignored(name):
    assert_config_equivalent(changed("keras3.json", name=name), load("keras2_new_inner.json"))


@pytest.mark.parametrize(
    "change",
    [
        {"initial_scale": 64},
        {"dynamic_growth_steps": 10.0},
        {INNER + "momentum": 0.8999999761581421},  # 0.9 read back through float32
        {INNER + "learning_rate": 0.5000000000000001},  # the same float32
    ],
    ids=["int-scale", "float-growth-steps", "float32-momentum", "float64-noise"],
)
def test_numbers_that_are_the_same_float32_are_equal(change):
    assert_config_equivalent(changed("keras3.json", **change), load("keras2_legacy_inner.json"))


def test_a_learning_rate_read_back_through_float32_equals_the_one_written():
    # Keras writes learning_rate=0.01 back as 0.009999999776482582 (its float32 variable).
    assert_config_equivalent(
        changed("keras3.json", **{INNER + "learning_rate": 0.01}),
        changed("keras2_legacy_inner.json", **{INNER + "learning_rate": 0.009999999776482582}),
    )


FLOAT32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@given(FLOAT32, FLOAT32)
def test_learning_rates_are_equal_exactly_when_their_float32_values_are(first, second):
    def with_learning_rate(value: float) -> dict[str, Any]:
        return changed("keras3.json", **{INNER + "learning_rate": value})

    assert (config_differences(with_learning_rate(first), with_learning_rate(second)) == []) == (
        first == second
    )
    # The neighbouring float32 is another rate; any decimal that rounds to this float32 (here
    # its 9-digit spelling) is the same rate.
    assert config_differences(with_learning_rate(first), with_learning_rate(next_float32_up(first)))
    assert_config_equivalent(with_learning_rate(first), with_learning_rate(float(f"{first:.9g}")))


@pytest.mark.parametrize(
    "key, value",
    [
        ("is_legacy_optimizer", True),
        ("jit_compile", True),
        ("loss_scale_factor", None),
        ("gradient_accumulation_steps", None),
        ("decay", 0.0),
        ("clipnorm", None),
        ("weight_decay", None),
        ("use_ema", False),
    ],
)
def test_a_setting_one_generation_lacks_is_ignored_when_off(key, value):
    assert_config_equivalent(
        changed("keras2_legacy_inner.json", **{INNER + key: value}),
        load("keras2_legacy_inner.json"),
    )


def test_moving_average_settings_are_ignored_without_use_ema():
    config = changed(
        "keras3.json", **{INNER + "ema_momentum": 0.5, INNER + "ema_overwrite_frequency": 3}
    )
    assert_config_equivalent(config, load("keras2_legacy_inner.json"))


def test_moving_average_settings_are_compared_with_use_ema():
    ema = changed("keras3.json", **{INNER + "use_ema": True})
    assert config_differences(load("keras2_legacy_inner.json"), ema) == [
        "inner_optimizer.config.ema_momentum: <missing> != 0.99",
        "inner_optimizer.config.ema_overwrite_frequency: <missing> != None",
        "inner_optimizer.config.use_ema: <missing> != True",
    ]
    faster = changed("keras3.json", **{INNER + "use_ema": True, INNER + "ema_momentum": 0.9})
    assert config_differences(ema, faster) == ["inner_optimizer.config.ema_momentum: 0.99 != 0.9"]


def test_the_tf_2_0_spelling_lr_is_learning_rate():
    config = changed(
        "keras2_legacy_inner.json", **{INNER + "learning_rate": DELETE, INNER + "lr": 0.5}
    )
    assert_config_equivalent(config, load("keras3.json"))


def test_defaults_left_out_are_the_defaults():
    inner = load("keras3.json")["inner_optimizer"]
    assert_config_equivalent(
        {"inner_optimizer": inner},
        {
            "inner_optimizer": inner,
            "dynamic": True,
            "initial_scale": 32768,
            "dynamic_growth_steps": 2000,
        },
    )


@pytest.mark.parametrize("name", DYNAMIC + FIXED)
def test_canonical_form_is_a_fixed_point(name):
    canonical = canonical_config(load(name))
    assert canonical_config(canonical) == canonical
    assert json.loads(json.dumps(canonical)) == canonical


def test_schedules_compare_by_settings_not_by_generated_name_or_module():
    def with_schedule(name: str | None, module: str, decay_steps: int) -> dict[str, Any]:
        schedule = {
            "class_name": "ExponentialDecay",
            "module": module,
            "registered_name": None,
            "config": {
                "initial_learning_rate": 0.5,
                "decay_steps": decay_steps,
                "decay_rate": 0.9,
                "staircase": False,
                "name": name,
            },
        }
        return changed("keras3.json", **{INNER + "learning_rate": schedule})

    keras2 = with_schedule(None, "keras.optimizers.schedules", 100)
    assert_config_equivalent(
        keras2, with_schedule("ExponentialDecay", "keras.src.optimizers.schedules", 100)
    )
    assert config_differences(keras2, with_schedule(None, "keras.optimizers.schedules", 200)) == [
        "inner_optimizer.config.learning_rate.config.decay_steps: 100 != 200"
    ]


# -- Different ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, expected",
    [
        ({INNER + "learning_rate": 0.1}, "inner_optimizer.config.learning_rate: 0.5 != 0.1"),
        ({INNER + "momentum": 0.0}, "inner_optimizer.config.momentum: 0.9 != 0"),
        ({INNER + "nesterov": True}, "inner_optimizer.config.nesterov: False != True"),
        ({"initial_scale": 128.0}, "initial_scale: 64 != 128"),
        ({"dynamic_growth_steps": 2000}, "dynamic_growth_steps: 10 != 2000"),
        ({INNER + "name": "my_sgd"}, "inner_optimizer.config.name: <missing> != 'my_sgd'"),
        ({"name": "my_lso"}, "name: <missing> != 'my_lso'"),
        (
            {INNER + "loss_scale_factor": 128.0},
            "inner_optimizer.config.loss_scale_factor: <missing> != 128",
        ),
        ({INNER + "clipnorm": 1.0}, "inner_optimizer.config.clipnorm: <missing> != 1"),
        (
            {INNER + "weight_decay": 0.004},
            "inner_optimizer.config.weight_decay: <missing> != 0.004",
        ),
    ],
    ids=[
        "learning-rate",
        "momentum",
        "nesterov",
        "initial-scale",
        "growth-steps",
        "user-chosen-inner-name",
        "user-chosen-lso-name",
        "loss-scale-factor",
        "clipnorm",
        "weight-decay",
    ],
)
def test_each_setting_that_differs_is_named_with_both_values(change, expected):
    assert config_differences(load("tf23_dynamic.json"), changed("keras3.json", **change)) == [
        expected
    ]


def test_a_legacy_decay_differs_from_a_generation_without_decay():
    config = changed("keras2_legacy_inner.json", **{INNER + "decay": 0.01})
    assert config_differences(config, load("keras3.json")) == [
        "inner_optimizer.config.decay: 0.01 != <missing>"
    ]


def test_the_next_float32_is_a_different_learning_rate():
    config = changed("keras3.json", **{INNER + "learning_rate": next_float32_up(0.5)})
    assert config_differences(load("keras3.json"), config) == [
        "inner_optimizer.config.learning_rate: 0.5 != 0.50000006"
    ]


def test_dynamic_and_fixed_scales_differ():
    fixed = {
        "inner_optimizer": load("keras3.json")["inner_optimizer"],
        "dynamic": False,
        "initial_scale": 64,
    }
    assert config_differences(load("keras3.json"), fixed) == [
        "dynamic: True != False",
        "dynamic_growth_steps: 10 != None",
    ]


def test_another_optimizer_class_is_one_line_plus_the_shared_settings_that_differ():
    adam = changed(
        "keras3.json",
        **{
            "inner_optimizer__class_name": "Adam",
            INNER + "momentum": DELETE,
            INNER + "nesterov": DELETE,
            INNER + "beta_1": 0.9,
        },
    )
    assert config_differences(load("keras3.json"), adam) == [
        "inner_optimizer.class_name: 'SGD' != 'Adam'"
    ]
    adam["inner_optimizer"]["config"]["learning_rate"] = 0.001
    assert config_differences(load("keras3.json"), adam) == [
        "inner_optimizer.class_name: 'SGD' != 'Adam'",
        "inner_optimizer.config.learning_rate: 0.5 != 0.001",
    ]


def test_a_registered_custom_optimizer_is_not_the_builtin_of_the_same_name():
    custom = changed("keras3.json", inner_optimizer__registered_name="my_package>SGD")
    assert config_differences(load("keras3.json"), custom) == [
        "inner_optimizer.class_name: 'SGD' != 'my_package>SGD'"
    ]


def test_the_failure_message_lists_only_the_differences_after_a_header():
    with pytest.raises(AssertionError) as failure:
        assert_config_equivalent(
            load("tf23_dynamic.json"),
            changed("keras3.json", initial_scale=128.0, **{INNER + "learning_rate": 0.01}),
        )
    assert str(failure.value) == (
        "LossScaleOptimizer configs are not equivalent (first != second):\n"
        "  initial_scale: 64 != 128\n"
        "  inner_optimizer.config.learning_rate: 0.5 != 0.01"
    )


def test_msg_is_the_first_line_of_the_failure_message():
    with pytest.raises(AssertionError, match=r"^migrated optimizer\nLossScaleOptimizer configs"):
        assert_config_equivalent(
            load("tf23_dynamic.json"), load("tf23_fixed.json"), msg="migrated optimizer"
        )


# -- Not configs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, match",
    [
        ([1, 2], "expected a LossScaleOptimizer or its config"),
        ("dynamic", "expected a LossScaleOptimizer or its config"),
        (
            {"class_name": "SGD", "config": {"learning_rate": 0.1}},
            "the serialized object is a 'SGD'",
        ),
        ({"class_name": "LossScaleOptimizer", "config": None}, "has no 'config' dict"),
        ({"dynamic": True}, "needs an 'inner_optimizer'"),
        ({**load("keras3.json"), "loss_scale_factr": 2}, r"Unknown keys .*loss_scale_factr"),
        (
            {**load("keras3.json"), "initial_scale": "dynamic"},
            '"initial_scale" must be a positive int or float',
        ),
        (
            {**load("keras2_fixed.json"), "dynamic_growth_steps": 10},
            '"dynamic_growth_steps" must be None if "dynamic" is False',
        ),
        (
            {
                **load("tf23_dynamic.json"),
                "loss_scale": {"class_name": "DynamicLossScale", "config": {"multiplier": 3.0}},
            },
            "multiplier is not 2",
        ),
        (
            {
                **load("tf23_fixed.json"),
                "loss_scale": {"class_name": "FixedLossScale", "config": {}},
            },
            "missing key 'loss_scale_value'",
        ),
        (
            {**load("keras3.json"), "inner_optimizer": "sgd"},
            "inner_optimizer: expected a serialized optimizer",
        ),
        (
            changed("keras3.json", **{INNER + "learning_rate": object()}),
            r"inner_optimizer\.config\.learning_rate: cannot compare a object",
        ),
    ],
    ids=[
        "list",
        "string",
        "not-a-loss-scale-optimizer",
        "serialized-without-config",
        "no-inner-optimizer",
        "unknown-key",
        "keras-3-positional-dynamic",
        "fixed-with-growth-steps",
        "multiplier-3",
        "fixed-without-value",
        "inner-optimizer-as-string",
        "unserializable-value",
    ],
)
def test_values_that_are_not_loss_scale_optimizer_configs_are_refused_by_name(value, match):
    with pytest.raises(ConfigError, match=match):
        assert_config_equivalent(value, load("keras3.json"))
    with pytest.raises(ConfigError, match=match):
        assert_config_equivalent(load("keras3.json"), value)


def test_comparing_configs_imports_neither_tensorflow_nor_keras_nor_libcst():
    script = f"""
import json, sys
from compat_lso.testing import assert_config_equivalent
import compat_lso.pytest_plugin
from compat_lso.testing import check_config as _check_config
assert "deepdiff" not in sys.modules, "deepdiff is imported only to describe a difference"
config = json.load(open({str(CONFIGS / "keras3.json")!r}))
assert_config_equivalent(config, json.load(open({str(CONFIGS / "tf23_dynamic.json")!r})))
paths = [{str(CONFIGS / "keras3.json")!r}, {str(CONFIGS / "tf23_fixed.json")!r}]
assert _check_config.main(paths) == 1
loaded = {{name.partition(".")[0] for name in sys.modules}}
heavy = sorted(loaded & {{"tensorflow", "keras", "tf_keras", "libcst"}})
assert not heavy, heavy
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
