"""The pytest plugin's fixture in real pytest sessions, and the entry points that install it."""

from __future__ import annotations

import configparser
import importlib
import importlib.metadata
import json
import pathlib

import pytest

pytest_plugins = ["pytester"]

ROOT = pathlib.Path(__file__).parent.parent.parent
CONFIGS = ROOT / "tests" / "fixtures" / "configs"
PLUGIN = "compat_lso.pytest_plugin"

TESTS_USING_THE_FIXTURE = f"""
import json, pathlib

CONFIGS = pathlib.Path({str(CONFIGS)!r})

def load(name):
    return json.loads((CONFIGS / name).read_text())

def test_equivalent(assert_config_equivalent):
    assert_config_equivalent(load("tf23_dynamic.json"), load("keras3.json"))

def test_different(assert_config_equivalent):
    other = load("keras3.json")
    other["inner_optimizer"]["config"]["learning_rate"] = 0.1
    assert_config_equivalent(load("tf23_dynamic.json"), other, msg="after migration")
"""


def entry_points_in_setup_cfg() -> dict[str, dict[str, str]]:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    groups: dict[str, dict[str, str]] = {}
    for group, lines in parser["options.entry_points"].items():
        entries = (line.partition("=") for line in lines.strip().splitlines())
        groups[group] = {name.strip(): target.strip() for name, _, target in entries}
    return groups


def test_the_fixture_passes_equivalent_configs_and_shows_the_difference_otherwise(pytester):
    pytester.makepyfile(TESTS_USING_THE_FIXTURE)
    result = pytester.runpytest("-p", PLUGIN)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E * after migration",
            "E * LossScaleOptimizer configs are not equivalent (first != second):",
            "E *   inner_optimizer.config.learning_rate: 0.5 != 0.1",
        ]
    )
    # The failure points at the test's own line, not into compat_lso (__tracebackhide__).
    assert "compat_lso/testing.py" not in result.stdout.str()


def test_the_entry_points_name_the_plugin_module_and_the_cli_function():
    groups = entry_points_in_setup_cfg()
    # Named after the module: `-p compat_lso.pytest_plugin` then finds the autoloaded plugin
    # registered already, instead of registering the module a second time under another name.
    assert groups["pytest11"] == {PLUGIN: PLUGIN}
    assert importlib.import_module(PLUGIN).assert_config_equivalent  # the fixture
    module, _, function = groups["console_scripts"]["compat-lso-check-config"].partition(":")
    assert callable(getattr(importlib.import_module(module), function))


def _installed_from_this_tree() -> bool:
    """Whether compat-lso's installed metadata, entry points included, was built from this tree."""
    for distribution in importlib.metadata.distributions(name="compat-lso"):
        # setuptools leaves the metadata of an editable install in the tree itself...
        if pathlib.Path(str(distribution.locate_file(""))).resolve() == ROOT:
            return True
        # ...and pip and uv record where they installed from.
        direct_url = json.loads(distribution.read_text("direct_url.json") or "{}")
        if direct_url.get("url") == ROOT.as_uri():
            return True
    return False


@pytest.mark.skipif(
    not _installed_from_this_tree(),
    reason="compat-lso's installed metadata (and so its entry points) is not from this tree",
)
def test_the_installed_entry_point_loads_the_fixture_without_p(pytester):
    pytest11 = importlib.metadata.entry_points(group="pytest11")
    assert [entry.value for entry in pytest11 if entry.name == PLUGIN] == [PLUGIN]
    pytester.makepyfile(TESTS_USING_THE_FIXTURE)
    pytester.runpytest().assert_outcomes(passed=1, failed=1)
    # And naming it with -p as well registers it once, without an error.
    pytester.runpytest("-p", PLUGIN).assert_outcomes(passed=1, failed=1)
