"""Check in tests and CI that two LossScaleOptimizers, or their saved configs, are equivalent.

    from compat_lso.testing import assert_config_equivalent

    assert_config_equivalent(old_optimizer, new_optimizer)
    assert_config_equivalent(json.load(open("tf23_config.json")), new_optimizer.get_config())

Either side may be a LossScaleOptimizer of any class and backend (native, `compat_lso`, the
experimental class), its `get_config()` in any historical form, or a serialized optimizer
`{"class_name": ..., "config": ...}`. Only what cannot change the optimizer is ignored (see
docs/testing.md); anything else fails with one line per difference:

    AssertionError: LossScaleOptimizer configs are not equivalent (first != second):
      inner_optimizer.config.learning_rate: 0.01 != 0.1

Comparing configs needs neither TensorFlow nor Keras. Describing differences needs `deepdiff`
(`pip install "compat-lso[testing]"`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compat_lso.testing.canonical import ConfigError, canonical_config, render_path

if TYPE_CHECKING:
    from deepdiff.model import DiffLevel

__all__ = ["ConfigError", "assert_config_equivalent", "canonical_config", "config_differences"]

_MISSING = "<missing>"


def config_differences(first: object, second: object) -> list[str]:
    """`path: first's value != second's value` for each difference that matters, sorted by path.

    Empty when the two are equivalent. Raises `ConfigError` for a value that is not a
    LossScaleOptimizer or one of its configs.
    """
    try:
        # deepdiff: a maintained structural diff that reports each differing path (added,
        # removed, changed, type-changed) rather than lines of text, which is what this lists.
        from deepdiff import DeepDiff
    except ImportError as error:
        raise ImportError(
            "Describing config differences needs deepdiff, which the 'testing' extra installs: "
            'pip install ".[testing]" from a clone of compat-lso'
        ) from error

    canonical = (canonical_config(first), canonical_config(second))
    tree = DeepDiff(
        *canonical,
        view="tree",
        threshold_to_diff_deeper=0,  # report each differing key, never a whole changed dict
        ignore_nan_inequality=True,
    )
    return sorted(
        _describe(level)
        for levels in tree.values()
        for level in levels
        if not _follows_from_class_change(level, canonical)
    )


def assert_config_equivalent(first: object, second: object, *, msg: str | None = None) -> None:
    """Fail, listing each difference, unless `first` and `second` are equivalent optimizers.

    Each of them: a LossScaleOptimizer (any class, any backend), its config in any historical
    form, or a serialized optimizer. `msg`, if given, is the first line of the failure message.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    differences = config_differences(first, second)
    if differences:
        raise AssertionError(failure_message(differences, msg=msg))


def failure_message(
    differences: list[str], *, msg: str | None = None, names: tuple[str, str] = ("first", "second")
) -> str:
    """The failure message: an optional first line, a header naming both sides, one line each."""
    header = f"LossScaleOptimizer configs are not equivalent ({names[0]} != {names[1]}):"
    lines = [msg, header] if msg else [header]
    lines.extend(f"  {difference}" for difference in differences)
    return "\n".join(lines)


def _follows_from_class_change(level: DiffLevel, trees: tuple[Any, Any]) -> bool:
    """A setting only one side has, where the two sides are of different classes (Adam vs SGD).

    The class line already says it; listing each setting of both classes would bury it.
    """
    keys = level.path(output_format="list")
    missing = _notpresent()
    if len(keys) < 2 or keys[-2] != "config" or not (level.t1 is missing or level.t2 is missing):
        return False
    owners = [_lookup(tree, keys[:-2]) for tree in trees]
    return all(isinstance(owner, dict) for owner in owners) and (
        owners[0].get("class_name") != owners[1].get("class_name")
    )


def _lookup(tree: Any, keys: list[Any]) -> Any:
    for key in keys:
        tree = tree[key]
    return tree


def _describe(level: DiffLevel) -> str:
    path = render_path(level.path(output_format="list"))
    return f"{path}: {_render_value(level.t1)} != {_render_value(level.t2)}"


def _render_value(value: Any) -> str:
    return _MISSING if value is _notpresent() else repr(value)


def _notpresent() -> object:
    """deepdiff's marker for a key that one side lacks."""
    from deepdiff.helper import notpresent as marker

    return marker
