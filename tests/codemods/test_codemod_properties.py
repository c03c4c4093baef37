"""Properties over generated and mutated modules: migrating never crashes, the output parses, one
run is enough, and files with nothing to migrate come back byte-identical.

Three sources of input:

- flat modules of the real-world statements the rules cover (`modules`);
- programs built around the old API from the constructs that trip span-based rewriters (`programs`):
  every import style and alias, nesting (blocks and calls), comments inside calls, odd spacing and
  line continuations, decorators, nested functions with their own imports, class bodies, walrus,
  `match`, f-strings, async, semicolons, CRLF, a BOM, a coding cookie;
- real-looking files (the rule fixtures and the bundled legacy project) mutated line by line and
  byte by byte (`mutated`).

Each property runs the small count written on it in the everyday suite; the fuzz job
(`HYPOTHESIS_PROFILE=fuzz`, see conftest.py and `nox -s fuzz`) runs 10,000 examples of each.
"""

from __future__ import annotations

import ast
import bisect
import io
import os
import tokenize
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codemods import guarantee
from codemods.apply.engine import MigrationError, migrate, parse
from codemods.io.files import migrate_bytes
from codemods.io.prefilter import may_contain_targets
from codemods.sweep.migrated import Positions
from codemods.table import Target

TARGETS = st.sampled_from(["keras2", "keras3", "shim"])
ROOT = Path(__file__).resolve().parents[2]
REAL_FILES = [
    *sorted((ROOT / "tests" / "codemods" / "fixtures").glob("*.py")),
    ROOT / "examples" / "legacy_project" / "train.py",
]


def examples(everyday: int) -> settings:
    """`everyday` examples in the normal suite; with HYPOTHESIS_PROFILE set, the profile's count."""
    if os.environ.get("HYPOTHESIS_PROFILE"):
        return settings(deadline=None)
    return settings(max_examples=everyday, deadline=None)


def assert_migrates_cleanly(text: str, target: Target) -> str:
    """The properties every migration of parsable code must have; returns the output."""
    result = migrate(text, target)
    parse(result.text)
    assert migrate(result.text, target).text == result.text, "a second run must change nothing"
    lines = text.count("\n") + 1
    assert all(1 <= f.line <= lines for f in result.findings), "findings point into the input"
    fixed = [f for f in result.findings if f.fixed and not f.note]
    assert not fixed or result.text != text, f"[*] findings that rewrite nothing: {fixed}"
    if "\r\n" in text and "\n" not in text.replace("\r\n", ""):
        assert "\n" not in result.text.replace("\r\n", ""), "CRLF files stay CRLF"
    return result.text


# -- flat modules of known statements -------------------------------------------------------------

IMPORTS = [
    "import tensorflow as tf",
    "from tensorflow import keras",
    "from tensorflow.keras import mixed_precision",
    "from tensorflow.keras.mixed_precision import experimental as mp",
    "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer",
    "from tensorflow.mixed_precision.experimental import DynamicLossScale, FixedLossScale",
    "import os  # unrelated",
]
STATEMENTS = [
    "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')",
    "opt = mp.LossScaleOptimizer(opt, loss_scale=128)",
    "opt = LossScaleOptimizer(optimizer=opt, loss_scale=DynamicLossScale(initial_loss_scale=2 ** "
    "10))",
    "opt = mp.LossScaleOptimizer(opt, FixedLossScale(32))",
    "opt = keras.mixed_precision.experimental.LossScaleOptimizer(opt, scale)",
    "mp.set_policy('mixed_float16')",
    "p = mixed_precision.experimental.global_policy()",
    "ok = isinstance(opt, (mp.LossScaleOptimizer, tf.keras.optimizers.Optimizer))",
    "print(opt.loss_scale())",
    "scaled = opt.get_scaled_loss(loss)",
    "x = 'tf.keras.mixed_precision.experimental.LossScaleOptimizer'  # a string",
    "def f(tf):\n    return tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf, 1)",
    "if flag:\n    opt = mp.LossScaleOptimizer(opt, 'dynamic')\nelse:\n    pass",
    "class LossScaleOptimizer2(mp.LossScaleOptimizer):\n    pass",
    "total = sum(range(10))",
]
UNRELATED = [
    "import os  # unrelated",
    "total = sum(range(10))",
    "x = 'mixed_precision experimental'",
]

modules = st.tuples(
    st.lists(st.sampled_from(IMPORTS), max_size=4),
    st.lists(st.sampled_from(STATEMENTS), max_size=6),
)


@examples(150)
@given(module=modules, target=TARGETS, crlf=st.booleans())
def test_output_parses_and_is_stable(module, target, crlf):
    imports, statements = module
    text = "\n".join(imports + statements) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    assert_migrates_cleanly(text, target)


@examples(50)
@given(lines=st.lists(st.sampled_from(UNRELATED), max_size=6), target=TARGETS)
def test_nothing_to_migrate_is_byte_identical(lines, target):
    text = "\n".join(lines)
    assert migrate(text, target).text == text


# -- generated programs around the old API ---------------------------------------------------

# Expressions that use the old API through the names the import block may bind (an unbound name
# is fine: the codemod reads code, it does not run it). KNOWN_*: what the rules handle themselves;
# SILENT_*: the shapes a run once passed over in silence, which the sweep must see (issue 11).
KNOWN_EXPRESSIONS = [
    "tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')",
    "tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale=128)",
    "tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, scale)",
    "mp.LossScaleOptimizer(opt, 'dynamic')",
    "mp.LossScaleOptimizer(optimizer=opt, loss_scale=mp.DynamicLossScale(initial_loss_scale=2 ** "
    "15))",
    "mp.LossScaleOptimizer(opt, FixedLossScale(32))",
    "LossScaleOptimizer(opt, DynamicLossScale(256, 1000))",
    "LSO(opt, 'dynamic')",
    "keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')",
    "mixed_precision.experimental.global_policy()",
    "mp.global_policy().compute_dtype",
    "mp.Policy('mixed_float16')",
    "mp.Policy('mixed_float16', loss_scale='dynamic')",
    "tf.keras.mixed_precision.experimental.set_policy('mixed_float16')",
    "mp.set_policy(mp.Policy('mixed_bfloat16'))",
    "opt.loss_scale()",
    "opt.get_scaled_loss(loss)",
    "opt.get_unscaled_gradients(grads)",
    "isinstance(opt, mp.LossScaleOptimizer)",
    "isinstance(opt, (tf.keras.mixed_precision.experimental.LossScaleOptimizer, int))",
    "mp.LossScaleOptimizer",
    "tf.mixed_precision.experimental.DynamicLossScale()",
    "tf.train.experimental.FixedLossScale(64)",
    "tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)",
    "compat_lso.experimental.LossScaleOptimizer(opt, 'dynamic')",
    "mp.LossScaleOptimizer(opt, 'dynamic').minimize",
    "mp.unknown_member",
]
SILENT_EXPRESSIONS = [
    "tf.compat.v2.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')",
    "getattr(tf.keras.mixed_precision, 'experimental', None)",
    "self._mixed_precision.set_policy('mixed_float16')",
    "get_mixed_precision().set_policy('mixed_float16')",
    "wrapper_class(opt, loss_scale='dynamic')",
    "mixed_precision.LossScaleOptimizer(opt, loss_scale='dynamic')",
    "build(tf.keras.mixed_precision.experimental, opt)",
    "build(get_mixed_precision(), opt)",
    "lso.LossScaleOptimizer(opt, 'dynamic')",
    "tf.keras.mixed_precision.experimental",
]
OLD_EXPRESSIONS = KNOWN_EXPRESSIONS + SILENT_EXPRESSIONS
NEUTRAL_EXPRESSIONS = [
    "opt",
    "sum(range(10))",
    "tf.config.experimental.list_physical_devices('GPU')",
    "'mixed_precision experimental loss_scale'",
    "tf.keras.optimizers.SGD(0.1)",
    # A local name only when nothing imports it: see neutral_programs.
    "LossScaleOptimizer(opt, 'dynamic')",
    "[x for x in range(3) if x]",
    "{'k': (1, 2)}",
]
KNOWN_BLOCKS = [
    "import tensorflow as tf",
    "import tensorflow as tf\nfrom tensorflow import keras",
    "from tensorflow.keras.mixed_precision import experimental as mp",
    "from tensorflow.keras import mixed_precision",
    "from tensorflow.keras import mixed_precision as mixed_precision",
    "import tensorflow as tf\nmp = tf.keras.mixed_precision.experimental",
    "import tensorflow as tf\nmp = tf.keras.mixed_precision.experimental\n"
    "LSO = mp.LossScaleOptimizer",
    "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer, "
    "DynamicLossScale",
    "from tensorflow.keras.mixed_precision.experimental import (\n"
    "    LossScaleOptimizer as LSO,  # aliased\n    FixedLossScale,\n)",
    "import tensorflow.keras.mixed_precision.experimental",
    "import keras",
    "import tf_keras as keras",
    "import compat_lso",
    "from compat_lso import experimental as mp",
    "import os, sys",
]
# Statements (blocks: '\t' is one indent) that bind the old API in the ways the sweep must follow.
SILENT_BLOCKS = [
    "try:\n\timport tensorflow as tf\nexcept ImportError:\n\ttf = None",
    "import tensorflow.compat.v2 as tf",
    "try:\n\tfrom tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
    "except ImportError:\n\tfrom tensorflow.keras import mixed_precision",
    "if hasattr(tf.keras.mixed_precision, 'experimental'):\n"
    "\twrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
    "else:\n\twrapper_class = tf.keras.mixed_precision.LossScaleOptimizer",
    "if tf.__version__ < '2.4':\n"
    "\tfrom tensorflow.python.keras.mixed_precision.experimental import (\n"
    "\t\tloss_scale_optimizer as lso,\n\t)",
    "self._mixed_precision = tf.keras.mixed_precision.experimental",
    "def get_mixed_precision():\n\treturn tf.keras.mixed_precision.experimental",
    "def build(mixed_precision, optimizer):\n"
    "\treturn mixed_precision.LossScaleOptimizer(optimizer, loss_scale='dynamic')",
    "try:\n\tmp = tf.keras.mixed_precision.experimental\nexcept AttributeError:\n"
    "\tmp = tf.keras.mixed_precision",
]
IMPORT_BLOCKS = KNOWN_BLOCKS + SILENT_BLOCKS
NEUTRAL_IMPORTS = [
    "import tensorflow as tf",
    "import os, sys",
    "import keras",
    "from tensorflow import keras",
    "from tensorflow.keras import mixed_precision",
    "from compat_lso import LossScaleOptimizer as LSO",
]
COMMENTS = [
    "# a comment",
    "# compat-lso: ignore",
    "# compat-lso: ignore[LSO001]",
    "# mixed_precision.experimental",
    "#",
    "# -*- not a cookie -*-",
    "# caf\u00e9 \u2603",
]


def respace(expression: str, draw) -> str:
    """The same expression with spaces (inside brackets: newlines, comments) between tokens."""
    tokens = [
        t
        for t in tokenize.generate_tokens(io.StringIO(expression).readline)
        if t.type not in (tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.NL)
    ]
    out, depth, previous_end = [], 0, None
    for token in tokens:
        if previous_end is not None:
            gap = " " if token.start != previous_end else ""
            choice = draw(st.integers(0, 5))
            if choice == 1:
                gap = " " + gap
            elif choice == 2 and depth:
                gap = draw(st.sampled_from(["\n", "  # inside a call\n", "\n\n   "]))
            elif choice == 3 and not depth:
                gap = " \\\n    " if gap else gap  # a continuation only where a space was
            out.append(gap)
        out.append(token.string)
        depth += token.string in "([{" and token.type == tokenize.OP
        depth -= token.string in ")]}" and token.type == tokenize.OP
        previous_end = token.end
    return "".join(out)


@st.composite
def expressions(draw, pool: list[str]) -> str:
    expression = draw(st.sampled_from(pool))
    wrap = draw(st.integers(0, 7))
    if wrap == 1:
        expression = f"f(g({expression}), key={draw(st.sampled_from(pool))})"
    elif wrap == 2:
        expression = f"[{expression}, ({draw(st.sampled_from(pool))})]"
    elif wrap == 3:
        expression = f"(lambda: {expression})()"
    elif wrap == 4:
        expression = f"{{'a': {expression}}}['a']"
    if draw(st.booleans()):
        expression = respace(expression, draw)
    return expression


@st.composite
def statements(draw, pool: list[str], imports: list[str], depth: int) -> list[str]:
    """One statement as lines, indented with a placeholder ('\\t' -> the program's indent unit)."""
    e = lambda: draw(expressions(pool))  # noqa: E731
    body = lambda: draw(blocks(pool, imports, depth + 1))  # noqa: E731
    kinds = [
        "assign",
        "expr",
        "annotated",
        "tuple",
        "walrus",
        "fstring",
        "semicolons",
        "comment",
        "assert",
        "import",
    ]
    if depth < 3:
        kinds += [
            "if",
            "for",
            "while",
            "with",
            "try",
            "def",
            "decorated",
            "nested",
            "class",
            "match",
            "async",
        ]
    kind = draw(st.sampled_from(kinds))
    if kind == "assign":
        return [f"x = {e()}" + draw(st.sampled_from(["", "  # trailing", "   #x"]))]
    if kind == "expr":
        return [e()]
    if kind == "annotated":
        return [f"y: object = {e()}"]
    if kind == "tuple":
        return [f"a, b = {e()}, {e()}"]
    if kind == "walrus":
        return [f"if (w := {e()}) is not None:", *indent(body())]
    if kind == "fstring":
        spec = draw(st.sampled_from(["", "!r", ":>10", "!s:^4", "=", "=!r"]))
        # Inside an f-string (3.11): no respacing (no comments, newlines or backslashes there).
        return [f'print(f"before {{ {draw(st.sampled_from(pool))} {spec}}} after {{x!r}}")']
    if kind == "semicolons":
        return [f"x = {e()}; y = 1;  z = {e()}"]
    if kind == "comment":
        return [draw(st.sampled_from(COMMENTS))]
    if kind == "assert":
        return [f"assert {e()}, 'message'"]
    if kind == "import":
        return draw(st.sampled_from(imports)).split("\n")
    if kind == "if":
        return [f"if {e()}:", *indent(body()), "elif x:", *indent(body()), "else:", *indent(body())]
    if kind == "for":
        return [f"for item in {e()}:", *indent(body())]
    if kind == "while":
        return [f"while {e()}:", *indent(body()), "\tbreak"]
    if kind == "with":
        return [f"with {e()} as handle, open('f'):", *indent(body())]
    if kind == "try":
        return [
            "try:",
            *indent(body()),
            "except (ValueError, TypeError) as error:",
            *indent(body()),
            "finally:",
            *indent(body()),
        ]
    if kind == "def":
        return [f"def function(a, b={e()}, *args, c: int = 1, **kwargs) -> None:", *indent(body())]
    if kind == "decorated":
        return [
            f"@decorator({e()})",
            "@tf.function",
            "def decorated(self):",
            f'\t"""docstring with {draw(st.sampled_from(pool))}"""',
            *indent(body()),
        ]
    if kind == "nested":
        local = draw(st.sampled_from(imports)).split("\n")
        return [
            "def outer():",
            *indent(local),
            "\tdef inner(value):",
            *indent(indent(body())),
            f"\t\treturn {e()}",
            "\treturn inner",
        ]
    if kind == "class":
        return [
            "class Model(tf.keras.Model):",
            f"\tattribute = {e()}",
            "",
            "\tdef method(self):",
            *indent(indent(body())),
        ]
    if kind == "match":
        return [
            f"match {e()}:",
            "\tcase {'scale': scale}:",
            *indent(indent(body())),
            "\tcase [first, *rest] if first:",
            f"\t\tz = {e()}",
            "\tcase _:",
            "\t\tpass",
        ]
    assert kind == "async"
    return [
        "async def runner():",
        f"\tawait something({e()})",
        "\tasync with lock:",
        *indent(indent(body())),
    ]


def indent(lines: list[str]) -> list[str]:
    return ["\t" + line if line else line for line in lines]


@st.composite
def blocks(draw, pool: list[str], imports: list[str], depth: int) -> list[str]:
    chosen = draw(
        st.lists(statements(pool, imports, depth), min_size=1, max_size=3 if depth else 6)
    )
    lines = [line for statement in chosen for line in statement]
    if all(not line.strip() or line.lstrip().startswith("#") for line in lines):
        lines.append("pass")  # a block of comments alone is not a block
    return lines


@st.composite
def programs(
    draw,
    pool: list[str] = OLD_EXPRESSIONS + NEUTRAL_EXPRESSIONS,
    imports: list[str] = IMPORT_BLOCKS,
) -> str:
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    header = draw(
        st.sampled_from(
            [
                "",
                "#!/usr/bin/env python\n",
                "# -*- coding: utf-8 -*-\n",
                '"""Module docstring."""\n',
                "from __future__ import annotations\n",
            ]
        )
    )
    top = draw(st.lists(st.sampled_from(imports), max_size=3))
    body = draw(blocks(pool, imports, 0))
    if any("compat_lso" in line for line in body) and "import compat_lso" not in top:
        # Real code imports compat_lso before using it. Left unbound, `compat_lso.experimental.X`
        # means nothing on the first run, and the `import compat_lso` the first run adds gives it
        # a meaning the second run then migrates: not a property of real code.
        top.insert(0, "import compat_lso")
    lines = [*"\n".join(top).split("\n"), *body] if top else body
    # A physical line inside brackets may hold a respaced expression's newlines: indent only the
    # first line of each statement line (continuation lines need no indentation inside brackets).
    text = header + "\n".join(_expand(line, unit) for line in lines)
    text += draw(st.sampled_from(["\n", "", "\n\n", "\n# trailing comment\n"]))
    ast.parse(text)  # the generator's own invariant: it only builds valid programs
    return text


def _expand(line: str, unit: str) -> str:
    stripped = line.lstrip("\t")
    return unit * (len(line) - len(stripped)) + stripped


@examples(60)  # about 40 ms each: the fuzz job runs 10,000
@given(text=programs(), target=TARGETS, crlf=st.booleans(), bom=st.booleans())
def test_generated_programs_migrate_cleanly(text, target, crlf, bom):
    if crlf:
        text = text.replace("\n", "\r\n")
    output = assert_migrates_cleanly(text, target)
    # The same through the file layer: bytes in (BOM, CRLF), bytes out, and a second run is a no-op.
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    outcome = migrate_bytes("generated.py", data, target, None)
    assert outcome.error is None, outcome.error
    assert outcome.text == output
    written = (b"\xef\xbb\xbf" if bom else b"") + output.encode("utf-8")
    again = migrate_bytes("generated.py", written, target, None)
    assert again.error is None and not again.changed


@examples(100)
@given(
    text=programs(pool=NEUTRAL_EXPRESSIONS, imports=NEUTRAL_IMPORTS),
    target=TARGETS,
    crlf=st.booleans(),
)
def test_generated_programs_without_targets_are_byte_identical(text, target, crlf):
    # The same constructs, with no old-API expression and no import of the old API (the words can
    # still be there, in strings, comments and `tf.config.experimental`: the prefilter may pass
    # them).
    if crlf:
        text = text.replace("\n", "\r\n")
    assert migrate(text, target).text == text
    outcome = migrate_bytes("clean.py", text.encode("utf-8"), target, None)
    assert outcome.error is None and not outcome.changed


# -- the guarantee: nothing the sweep would flag is left unreported -------------------------------


def spelled_removed_offsets(text: str) -> list[int]:
    """Offsets of every `mixed_precision.experimental` spelled in code (in an import: of its first
    imported name), found by tokens alone: an oracle independent of name resolution, so that a
    name the resolver loses is still seen."""
    starts = [0]
    for physical in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(physical))
    skip = {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    statement: list[tokenize.TokenInfo] = []
    found = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in skip:
            continue
        if token.type != tokenize.NEWLINE:
            statement.append(token)
            continue
        words = [t.string for t in statement]
        if words[:1] == ["from"] and "import" in words:
            module, imported = words[: words.index("import")], words[words.index("import") + 1 :]
            if "mixed_precision" in module and "experimental" in module + imported:
                first = next(t for t in statement[len(module) + 1 :] if t.string != "(")
                found.append(starts[first.start[0] - 1] + first.start[1])
        else:
            for i in range(len(words) - 2):
                if words[i : i + 3] == ["mixed_precision", ".", "experimental"]:
                    line, col = statement[i].start
                    found.append(starts[line - 1] + col)
        statement = []
    return found


@examples(60)  # a migration, the sweep's check and the oracle: the fuzz job runs 10,000
@given(text=programs(), target=TARGETS)
def test_nothing_the_sweep_flags_is_left_unreported(text, target):
    result = migrate(text, target)
    assert guarantee.unreported(text, target, result) == []
    # The independent oracle: every spelled removed path left in the output is inside a construct
    # a finding reports (a reference reported at its own line, or a call reported as a whole).
    positions = Positions(result.edits)
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    for offset in spelled_removed_offsets(result.text):
        original = positions.original(offset)
        line = bisect.bisect_right(starts, original)
        covered = any(a <= original < b for a, b in result.reported)
        assert covered, f"line {line} left unreported: {text.splitlines()[line - 1]!r}"


@examples(40)
@given(
    text=programs(pool=KNOWN_EXPRESSIONS + NEUTRAL_EXPRESSIONS, imports=KNOWN_BLOCKS),
    target=TARGETS,
)
def test_no_rule_leaves_a_known_shape_to_the_safety_net(text, target):
    # LSO100 is the sweep's safety net: for what the rules know, they rewrite or report it.
    gaps = [f for f in migrate(text, target).findings if f.code == "LSO100"]
    assert not gaps, gaps


# -- mutated real files ---------------------------------------------------------------------------

SNIPPETS = [stmt for stmt in STATEMENTS if "\n" not in stmt] + [
    "# inserted comment",
    "pass",
    "x = 1  # x",
    "import tensorflow as tf",
]


@st.composite
def mutated(draw) -> tuple[str, str]:
    """A real-looking file with a few line-level mutations; returns (name, text)."""
    path = draw(st.sampled_from(REAL_FILES))
    lines = path.read_text(encoding="utf-8").split("\n")
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, max(0, len(lines) - 1)))
        line = lines[index] if lines else ""
        margin = line[: len(line) - len(line.lstrip())]
        operation = draw(st.integers(0, 9))
        if operation == 0 and lines:
            del lines[index]
        elif operation == 1:
            lines.insert(index, line)
        elif operation == 2 and index + 1 < len(lines):
            lines[index], lines[index + 1] = lines[index + 1], lines[index]
        elif operation == 3:
            lines.insert(index, margin + draw(st.sampled_from(COMMENTS)))
        elif operation == 4:
            lines[index] = line + "  " + draw(st.sampled_from(COMMENTS))
        elif operation == 5:
            lines.insert(index, margin + draw(st.sampled_from(SNIPPETS)))
        elif operation == 6:
            lines = [("  " * ((len(x) - len(x.lstrip(" "))) // 4)) + x.lstrip(" ") for x in lines]
        elif operation == 7:
            lines = [x.replace("mixed_precision", "mpx") for x in lines]
        elif operation == 8:
            lines = [
                x.replace("'dynamic'", draw(st.sampled_from(["128", "scale", "'dynamic'"])))
                for x in lines
            ]
        elif operation == 9 and line.strip():
            cut = draw(st.integers(0, len(line)))
            lines[index] = (
                line[:cut]
                + draw(st.sampled_from([" ", "(", ")", ":", "\\", "'", "#", "\t"]))
                + line[cut:]
            )
    return path.name, "\n".join(lines)


def parses(text: str) -> bool:
    try:
        parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


@examples(100)
@given(file=mutated(), target=TARGETS, crlf=st.booleans())
@pytest.mark.filterwarnings(
    "error"
)  # the codemod's own parse keeps the user's code's warnings to itself
def test_mutated_real_files_migrate_or_are_reported(file, target, crlf):
    _, text = file
    if crlf:
        text = text.replace("\n", "\r\n")
    if parses(text):
        assert_migrates_cleanly(text, target)
    else:
        with pytest.raises(MigrationError, match="does not parse"):
            migrate(text, target)


NEUTRALISE = {
    "experimental": "exp_erimental",
    "mixed_precision": "mixed_prec",
    "LossScale": "LossScal",
    "loss_scale": "loss_scal",
    "get_scaled_loss": "get_scal_loss",
    "get_unscaled_gradients": "get_unscal_gradients",
    "mixed_float16": "mixed_flt16",  # LSO019: compile() wraps the optimizer there
    "Policy": "Polcy",  # the sweep checks Policy(..., loss_scale=...) on the new class too
    "set_policy": "set_polcy",  # LSO022/LSO023: compile() under a policy set here
    "set_global_policy": "set_global_polcy",
}


@examples(50)
@given(file=mutated(), target=TARGETS)
def test_mutated_real_files_without_targets_are_byte_identical(file, target):
    _, text = file
    for old, new in NEUTRALISE.items():
        text = text.replace(old, new)
    assert not may_contain_targets(text.encode("utf-8"), target)
    outcome = migrate_bytes("neutral.py", text.encode("utf-8"), target, None)
    if outcome.error is None:
        assert outcome.text == text


@examples(100)
@given(file=mutated(), target=TARGETS, data=st.data())
def test_byte_level_damage_is_reported_never_raised(file, target, data):
    name, text = file
    raw = bytearray(text.encode("utf-8"))
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(raw)))
        raw[position:position] = data.draw(st.binary(min_size=1, max_size=3))
    path = name.replace(".py", data.draw(st.sampled_from([".py", ".ipynb"])))
    outcome = migrate_bytes(path, bytes(raw), target, None)  # must not raise, whatever the bytes
    if outcome.error is not None:
        assert (
            outcome.result is None and outcome.error.endswith(("left unchanged", "unchanged"))
        ) or outcome.error.startswith("not a notebook"), outcome.error
    elif not path.endswith(".ipynb"):
        parse(outcome.text)
        assert migrate(outcome.text, target).text == outcome.text
