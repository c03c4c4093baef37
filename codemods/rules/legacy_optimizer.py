"""LSO024: a Keras 2 legacy optimizer (`tf.keras.optimizers.legacy.Adam`, ...) in mixed-precision
code, on --target keras3 and shim: Keras 3 cannot build one.

TF 2.11-2.15 code kept its optimizers on `tf.keras.optimizers.legacy` for checkpoints or Horovod,
often inside `LossScaleOptimizer(...)`. Keras 3's `keras.optimizers.legacy` holds some of the
names only to raise ImportError when one is built. A call `tf.keras.optimizers.legacy.X(...)`
becomes `tf.keras.optimizers.X(...)` where the table (codemods/table/legacy_optimizers.py) says
Keras 3's X has the same rule and the call's arguments mean the same there (`lr=` renamed
learning_rate), with a note at the line saying how close the numbers are; every other reference
is reported, with tf_keras as the help where no Keras 3 class has the same rule. Only modules that
use mixed precision (table.MIXED_PRECISION_WORDS) are looked at.
"""

from __future__ import annotations

import ast
import math
from typing import Any

from codemods import table
from codemods.meaning.module import Context
from codemods.rules._rename import arrow, short
from codemods.source import Edit

CODE = "LSO024"
_UNKNOWN = object()


def on_module(context: Context) -> None:
    if context.target not in table.LEGACY_OPTIMIZER_TARGETS:
        return
    text = context.source.text
    if ".legacy" not in text and "legacy." not in text:
        return
    if not any(word in text for word in table.MIXED_PRECISION_WORDS):
        return
    calls = {id(call.func): call for call in context.names.calls}
    nodes: list[ast.Attribute | ast.Name] = [*context.names.attributes, *context.names.loads]
    for node in nodes:
        qualified = context.qualified(node) or ""
        if not isinstance(node.ctx, ast.Load) or not qualified.startswith(table.LEGACY_OPTIMIZERS):
            continue
        name = qualified.rsplit(".", 1)[-1]
        if name in ("legacy", "Optimizer") or not context.wants(CODE, node):  # built: reported
            continue
        call = calls.get(id(node))
        if call is not None and name in table.LEGACY_EQUIVALENTS:
            _call(context, node, call, qualified, name)
            continue
        context.report(
            CODE,
            node,
            f"{context.source.segment(node)}: Keras 3 builds no legacy optimizer (ImportError)",
            reason="no-equivalent",
            help=f"use tf.keras.optimizers.{name} (last bits may differ), or tf_keras with "
            "TF_USE_LEGACY_KERAS=1",
        )


def _call(context: Context, node: ast.expr, call: ast.Call, qualified: str, name: str) -> None:
    written = context.source.segment(node)
    blocked = _blocker(written, name, call)
    new = qualified.replace(".legacy.", ".")
    spelled = context.spell(node, new) if blocked is None and context.safe(CODE) else None
    if spelled is None:
        fact, help_ = blocked or (f"{written}: cannot write {short(new)} here", None)
        context.report(
            CODE, node, fact, reason="no-equivalent", help=help_ or table.LEGACY_TF_KERAS_HELP
        )
        return
    edits = [context.edit(node, spelled.text)]
    for keyword in call.keywords:
        if keyword.arg == "lr":  # TF 2.15's old spelling, which Keras 3 refuses
            start = context.source.span(keyword)[0]
            edits.append(Edit(start, start + len("lr"), "learning_rate"))
    context.fix(
        CODE,
        node,
        arrow(qualified, new),
        edits,
        consumes=context.loads_in(node),
        spellings=[spelled],
        manual=f"{written}: Keras 3 builds no legacy optimizer (ImportError)",
    )
    closeness = table.LEGACY_EQUIVALENTS[name][2]
    context.note(
        CODE, node, table.LEGACY_NOTE[closeness].format(name=name), help=table.LEGACY_TF_KERAS_HELP
    )


def _blocker(written: str, name: str, call: ast.Call) -> tuple[str, str] | None:
    """Why the call cannot become Keras 3's class of the same name: (fact, help), or None."""
    parameters, shared, closeness = table.LEGACY_EQUIVALENTS[name]
    if closeness == table.LEGACY_DIFFERENT:
        return f"{written}: {table.LEGACY_NOT_SAME[name][1]}", table.LEGACY_TF_KERAS_HELP
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return f"{written}(*args, **kwargs): its arguments are not known here", (
            f"pass Keras 3's {name} its arguments by name, or " + table.LEGACY_TF_KERAS_HELP
        )
    if len(call.args) > shared:
        moved = parameters[shared]
        return f"{written}: Keras 3's {name} takes {moved} by keyword only", (
            f"pass {moved}= by keyword"
        )
    given: dict[str, ast.expr] = dict(zip(parameters, call.args, strict=False))
    given.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    unknown = sorted(set(given) - set(parameters) - set(table.LEGACY_KEYWORDS))
    if unknown:
        return f"{written}: arguments TF 2.15 refused ({', '.join(unknown)})", "fix the call first"
    if "lr" in given and "learning_rate" in given:
        return f"{written}: both lr and learning_rate (TF 2.15 used lr)", (
            "keep one, as learning_rate=<lr's value>"
        )
    if "decay" in given:
        return f"{written}(decay=...): Keras 3 ignores decay", (
            "learning_rate=tf.keras.optimizers.schedules.InverseTimeDecay(lr, 1, decay) is "
            "TF 2.15's decay"
        )
    epsilon = _literal(given["epsilon"]) if "epsilon" in given else 1.0
    if epsilon is None or epsilon == 0:
        return f"{written}(epsilon={epsilon!r}): TF 2.15 used the backend's 1e-7 instead", (
            "write epsilon=1e-7"
        )
    return _rule_differs(written, name, given)


def _rule_differs(written: str, name: str, given: dict[str, ast.expr]) -> tuple[str, str] | None:
    defaults = table.LEGACY_DEFAULTS.get(name, {})
    value = {key: _literal(given[key]) if key in given else v for key, v in defaults.items()}
    if name == "RMSprop":
        same = _number(value["momentum"]) and value["momentum"] > 0
    elif name == "Adagrad":
        initial, epsilon = value["initial_accumulator_value"], value["epsilon"]
        same = (
            _number(initial)
            and _number(epsilon)
            and initial > 0
            and epsilon / math.sqrt(initial) <= table.LEGACY_ADAGRAD_LAST_BITS
        )
    else:
        return None
    if same:
        return None
    return f"{written}: {table.LEGACY_NOT_SAME[name][1]}", table.LEGACY_TF_KERAS_HELP


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _literal(node: ast.expr) -> Any:
    """A number, None or bool written in the call (`2**-4` too); _UNKNOWN otherwise."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, power = _literal(node.left), _literal(node.right)
        return base**power if _number(base) and _number(power) else _UNKNOWN
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN
