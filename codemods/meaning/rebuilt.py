"""Keras calls that rebuild an optimizer from another's config, or give that config.

`tf.keras.optimizers.deserialize(tf.keras.optimizers.serialize(opt))` (resuming from a stored
config), `tf.keras.optimizers.get(opt)` (which returns `opt` itself), `X.from_config(config)` of
a loss scale optimizer's class and `type(opt).from_config(...)` or `opt.__class__.from_config`
give what `opt` was: codemods/meaning/instances.py follows a loss scale optimizer through them as
through its class. `opt.get_config()` and `serialize(opt)` are its config. Here only the shape of
the call: which expression the result comes from.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from codemods import table
from codemods.meaning.names import Analysis


@dataclass(frozen=True)
class Rebuilt:
    """Where a call's optimizer (or config) comes from: `source`, the config or optimizer it is
    given (None: none given); `instance`, the `opt` of `type(opt).from_config`; `from_config`: a
    constructor's `from_config`, which makes one whatever the config; `factory`: `deserialize` or
    `get`, whose result a config from elsewhere may make any optimizer."""

    source: ast.expr | None
    instance: ast.expr | None = None
    from_config: bool = False
    factory: bool = False


def rebuilt_by(
    call: ast.Call, qualified: str | None, names: Analysis, constructors: frozenset[str]
) -> Rebuilt | None:
    """What `call` rebuilds an optimizer (or its config) from; None: it does not."""
    func, given = call.func, _first_argument(call)
    if qualified in table.OPTIMIZER_CONFIGS:
        return Rebuilt(given)
    if _method(call, "get_config") and not call.args and not call.keywords:
        assert isinstance(func, ast.Attribute)
        return Rebuilt(func.value)
    if qualified in table.OPTIMIZER_FACTORIES and given is not None:
        return Rebuilt(given, factory=True)
    if not _method(call, "from_config"):
        return None
    assert isinstance(func, ast.Attribute)
    instance = _instance_of_class(func.value, names)
    if instance is not None:
        return Rebuilt(given, instance=instance)
    if names.qualified(func.value) in constructors:
        return Rebuilt(given, from_config=True)
    return None


def makes_from_config(call: ast.Call, names: Analysis, constructors: frozenset[str]) -> bool:
    """`X.from_config(...)` of a constructor: it makes one, as calling X does."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "from_config"
        and names.qualified(func.value) in constructors
    )


def _instance_of_class(node: ast.expr, names: Analysis) -> ast.expr | None:
    """`opt` of `type(opt)` or `opt.__class__`."""
    if isinstance(node, ast.Attribute) and node.attr == "__class__":
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and names.is_builtin(node.func)
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.args[0]
    return None


def _first_argument(call: ast.Call) -> ast.expr | None:
    """The one argument a factory takes (`config`, `identifier`), positional or by keyword."""
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    named = [k for k in call.keywords if k.arg is not None]
    return named[0].value if named else None


def _method(call: ast.Call, name: str) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == name
