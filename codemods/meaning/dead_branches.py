"""Version tests whose outcome is the same on every supported TensorFlow (TF >= 2.12).

A branch under `if tf.__version__.startswith("2.2."):`, or the `else` of `if
version.parse(tf.__version__) >= version.parse("2.4"):`, never runs on a TensorFlow the project
supports: what it uses cannot break there. Such a test is decided here, and only where that is
provable: the test reads TensorFlow's own version string (`tf.__version__`,
`tf.version.VERSION`) and
- `.startswith(p)` with `p` a whole major or minor version ending in a dot (`"1."`, `"2.2."`;
  not `"2.1"`, which TF 2.10-2.19 start with too), or
- compares it, parsed (`packaging.version.parse`/`Version`, distutils' `LooseVersion` or
  `StrictVersion`), with a literal
  version below 2.12 (`<`, `<=`, `>`, `>=`, `==`, `!=`),
- combined with `not`, `and`, `or`. Anything else is undecided: the branch may run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from codemods.meaning.names import Analysis

# The oldest TensorFlow the project supports (pyproject.toml, docs/support.md).
FLOOR: tuple[int, int] = (2, 12)

_TF_VERSIONS = frozenset({"tensorflow.__version__", "tensorflow.version.VERSION"})
_PARSERS = frozenset(
    {
        "packaging.version.parse",
        "packaging.version.Version",
        "pkg_resources.parse_version",
        "distutils.version.LooseVersion",
        "distutils.version.StrictVersion",
        "looseversion.LooseVersion",
        "setuptools._distutils.version.LooseVersion",
        "setuptools._distutils.version.StrictVersion",
    }
)
# distutils' classes parse a string they are compared with (Version._cmp).
_LOOSE = frozenset(p for p in _PARSERS if p.endswith(("LooseVersion", "StrictVersion")))
_RELEASE = re.compile(r"\d+(\.\d+)*")
_WHOLE_PREFIX = re.compile(r"(\d+)\.(?:(\d+)\.)?")


@dataclass(frozen=True)
class Verdict:
    """`value`: what the test is on every TF >= 2.12. `other`: the TF versions on which it is
    the other way, in words (`TF 2.2`, `TF < 2.4`): where the dead branch would run."""

    value: bool
    other: str


def decide(test: ast.expr, names: Analysis) -> Verdict | None:
    """The test's value on every supported TensorFlow, or None where it may differ."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = decide(test.operand, names)
        return None if inner is None else Verdict(not inner.value, inner.other)
    if isinstance(test, ast.BoolOp):
        verdicts = [decide(value, names) for value in test.values]
        deciding = isinstance(test.op, ast.Or)  # the value one operand settles the whole with
        settled = [v for v in verdicts if v is not None and v.value is deciding]
        if settled:
            return settled[0]
        if all(v is not None for v in verdicts):
            return Verdict(not deciding, " or ".join(v.other for v in verdicts if v is not None))
        return None
    if isinstance(test, ast.Call):
        return _startswith(test, names)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _compared(test.left, test.ops[0], test.comparators[0], names)
    return None


def _startswith(call: ast.Call, names: Analysis) -> Verdict | None:
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "startswith"
        and names.qualified(func.value) in _TF_VERSIONS
        and len(call.args) == 1
        and not call.keywords
    ):
        return None
    prefix = _text(call.args[0])
    match = _WHOLE_PREFIX.fullmatch(prefix or "")
    if match is None:
        return None
    major, minor = int(match[1]), match[2]
    if minor is None:
        return Verdict(False, f"TF {major}") if major < FLOOR[0] else None
    if (major, int(minor)) < FLOOR:
        return Verdict(False, f"TF {major}.{int(minor)}")
    return None


# For `parsed(tf) OP literal`: the test's value on every TF above the literal, and the versions
# on which it is the other way.
_ABOVE: dict[type[ast.cmpop], tuple[bool, str]] = {
    ast.Lt: (False, "< "),
    ast.LtE: (False, "<= "),
    ast.Gt: (True, "<= "),
    ast.GtE: (True, "< "),
    ast.Eq: (False, ""),
    ast.NotEq: (True, ""),
}
_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
    ast.Eq: ast.Eq,
    ast.NotEq: ast.NotEq,
}


def _compared(left: ast.expr, op: ast.cmpop, right: ast.expr, names: Analysis) -> Verdict | None:
    if type(op) not in _ABOVE:
        return None
    parser = _tf_parsed(left, names)
    if parser is None:
        parser = _tf_parsed(right, names)
        if parser is None:
            return None
        left, right, op = right, left, _FLIPPED[type(op)]()
    literal = _literal_version(right, names, loose=parser in _LOOSE)
    if literal is None:
        return None
    numbers = tuple(int(part) for part in literal.split("."))
    if numbers[:2] >= FLOOR:  # 2.12 itself, or above: a TF the project supports may be either side
        return None
    value, relation = _ABOVE[type(op)]
    return Verdict(value, f"TF {relation}{literal}")


def _tf_parsed(node: ast.expr, names: Analysis) -> str | None:
    """The parser's name when `node` is `parse(tf.__version__)` (or another parser)."""
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and not node.keywords
        and names.qualified(node.args[0]) in _TF_VERSIONS
    ):
        parser = names.qualified(node.func)
        return parser if parser in _PARSERS else None
    return None


def _literal_version(node: ast.expr, names: Analysis, *, loose: bool) -> str | None:
    """'2.4' for `parse("2.4")` (any parser), or for "2.4" itself beside distutils' LooseVersion
    or StrictVersion (which parse a string they are compared with); None for anything else (a
    pre-release, a variable)."""
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and not node.keywords
        and names.qualified(node.func) in _PARSERS
    ):
        text = _text(node.args[0])
    elif loose:
        text = _text(node)
    else:
        return None
    return text if text is not None and _RELEASE.fullmatch(text) else None


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
