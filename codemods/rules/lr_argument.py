"""LSO026: Keras 2's `lr=` in a Keras optimizer's constructor or config -> `learning_rate=`.

`tf.keras.optimizers.Adam(lr=1e-3)`: TF 2.0-2.10's spelling, which Keras 3 refuses and TF
2.11-2.15's default optimizers ignored (their default rate kept). On every target the keyword
becomes `learning_rate=`, the rate the code was written with, and a config dict written in
`tf.keras.optimizers.get({...})`, `deserialize({...})` or `X.from_config({...})` gets its "lr"
key renamed the same way; the fact at the line says what TF 2.11-2.15 did. A call or config with
both is reported (Keras 2 used lr). Where LSO024 rewrites a legacy optimizer's call (keras3,
shim), it renames `lr=` itself. Only modules that use mixed precision are looked at.
"""

from __future__ import annotations

import ast

from codemods import table
from codemods.meaning.module import Context
from codemods.source import Edit

CODE = "LSO026"


def on_module(context: Context) -> None:
    text = context.source.text
    if "lr" not in text or not any(word in text for word in table.MIXED_PRECISION_WORDS):
        return
    for call in context.names.calls_ending_in(_CALLED):
        qualified = context.qualified(call.func) or ""
        if _optimizer_class(qualified):
            if qualified.startswith(table.LEGACY_OPTIMIZERS) and (
                context.target in table.LEGACY_OPTIMIZER_TARGETS
            ):
                continue  # LSO024's: it renames lr= in the call it rewrites, or reports it
            keywords = {k.arg: k for k in call.keywords if k.arg is not None}
            if "lr" in keywords:
                _rename(context, call, keywords["lr"], "learning_rate" in keywords, qualified)
            if qualified.endswith(".from_config") and call.args:
                # TF 2.11-2.15's default optimizers' from_config dropped it, as their constructor.
                _config(context, call, call.args[0], _used_by_tf215(qualified))
        elif qualified in table.OPTIMIZER_FACTORIES and call.args:
            config = _value_of(call.args[0], "config")
            if config is not None:  # TF 2.15's get/deserialize turned "lr" into learning_rate
                _config(context, call, config, used=True)


# The last parts of the callees looked at: optimizer classes, their from_config, get/deserialize.
_CALLED = frozenset(
    {
        *table.KERAS_OPTIMIZER_CLASSES,
        "from_config",
        *(factory.rpartition(".")[2] for factory in table.OPTIMIZER_FACTORIES),
    }
)


def _optimizer_class(qualified: str) -> bool:
    """`qualified` is a Keras optimizer class (or its `from_config`)."""
    qualified = qualified.removesuffix(".from_config")
    module, _, name = qualified.rpartition(".")
    return f"{module}." in table.KERAS_OPTIMIZER_MODULES and name in table.KERAS_OPTIMIZER_CLASSES


def _rename(
    context: Context, call: ast.Call, keyword: ast.keyword, both: bool, qualified: str
) -> None:
    if not context.wants(CODE, keyword):
        return
    written = _written(context, call)
    if both:
        context.report(
            CODE,
            keyword,
            f"{written}: both lr= and learning_rate= (Keras 2 used lr)",
            reason="choice",
        )
        return
    start = context.source.span(keyword)[0]
    context.fix(
        CODE,
        keyword,
        table.LR_FACT.format(written=written, what=_what(_used_by_tf215(qualified))),
        [Edit(start, start + len("lr"), "learning_rate")],
        consumes=set(),
    )


def _config(context: Context, call: ast.Call, config: ast.expr, used: bool) -> None:
    """A config dict written in the call: its "lr" key -> "learning_rate"."""
    if not isinstance(config, ast.Dict):
        return
    keys = {k.value: k for k in config.keys if isinstance(k, ast.Constant)}
    key = keys.get("lr")
    if key is None or not context.wants(CODE, key):
        return
    written = f"{_written(context, call)}({{'lr': ...}})"
    if "learning_rate" in keys:
        context.report(
            CODE, key, f"{written}: both lr and learning_rate (Keras 2 used lr)", reason="choice"
        )
        return
    quoted = context.source.segment(key)
    context.fix(
        CODE,
        key,
        table.LR_FACT.format(written=written, what=_what(used)),
        [context.edit(key, quoted.replace("lr", "learning_rate", 1))],
        consumes=set(),
    )


def _value_of(node: ast.expr, key: str) -> ast.expr | None:
    """`node[key]` where `node` is a dict written with that constant key."""
    if not isinstance(node, ast.Dict):
        return None
    for k, v in zip(node.keys, node.values, strict=True):
        if isinstance(k, ast.Constant) and k.value == key:
            return v
    return None


def _used_by_tf215(qualified: str) -> bool:
    """TF 2.15's class took `lr` as the rate: its legacy ones (OptimizerV2) did."""
    return ".legacy." in qualified


def _what(used: bool) -> str:
    return table.LR_LEGACY_OPTIMIZER if used else table.LR_DEFAULT_OPTIMIZER


def _written(context: Context, call: ast.Call) -> str:
    func = context.source.segment(call.func)
    return func if "\n" not in func else func.split("\n", 1)[0] + "..."
