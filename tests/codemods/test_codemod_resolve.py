"""Name resolution: imports and aliases by meaning, scopes and shadowing."""

import ast
import contextlib
import gc
from pathlib import Path

import pytest

from codemods.apply.engine import MigrationError, migrate
from codemods.meaning import names as names_module
from codemods.meaning import scopes as walk_module
from codemods.meaning.names import Analysis
from codemods.source import parent_map


def resolve_last(code: str) -> str | None:
    """The qualified name of the last `.x` / `.z` attribute in the code."""
    tree = ast.parse(code)
    analysis = Analysis(tree)
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in ("x", "z")]
    return analysis.qualified(max(nodes, key=lambda n: (n.lineno, n.col_offset)))


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param(
            "import tensorflow as tf\ntf.keras.mixed_precision.x",
            "tensorflow.keras.mixed_precision.x",
            id="import-as",
        ),
        pytest.param(
            "import tensorflow.keras\ntensorflow.keras.x",
            "tensorflow.keras.x",
            id="dotted-import-binds-the-top",
        ),
        pytest.param(
            "from tensorflow import keras\nkeras.x", "tensorflow.keras.x", id="from-import"
        ),
        pytest.param(
            "import tensorflow as tf\nmp = tf.keras.mixed_precision\nmp.x",
            "tensorflow.keras.mixed_precision.x",
            id="alias-assignment",
        ),
        pytest.param(
            "import tensorflow as tf\na = tf.keras\nb = a.mixed_precision\nb.x",
            "tensorflow.keras.mixed_precision.x",
            id="alias-of-an-alias",
        ),
        pytest.param(
            "def f():\n    import tensorflow as tf\n    tf.x",
            "tensorflow.x",
            id="import-inside-a-function",
        ),
        pytest.param(
            "import tensorflow as tf\ndef f():\n    tf.x",
            "tensorflow.x",
            id="module-import-seen-in-a-function",
        ),
        pytest.param("import tensorflow as tf\ndef f(tf):\n    tf.x", None, id="parameter-shadows"),
        pytest.param(
            "import tensorflow as tf\ntf = make()\ntf.x", None, id="rebinding-makes-it-unknown"
        ),
        pytest.param("import tensorflow as tf\nf = lambda tf: tf.x", None, id="lambda-parameter"),
        pytest.param(
            "import tensorflow as tf\nys = [tf.x for tf in items]",
            None,
            id="comprehension-variable",
        ),
        pytest.param(
            "import tensorflow as tf\nclass A:\n    tf = 1\n    def f(self):\n        tf.x",
            "tensorflow.x",
            id="class-scope-is-skipped-by-methods",
        ),
        pytest.param(
            "import keras as tf\nimport tensorflow as tf\ntf.x",
            None,
            id="two-imports-meaning-different-things",
        ),
        pytest.param(
            "import tensorflow as tf\nimport tensorflow as tf\ntf.x",
            "tensorflow.x",
            id="the-same-import-twice",
        ),
        pytest.param("from . import tf\ntf.x", None, id="relative-import"),
        pytest.param("x = x.y\nx.z", None, id="self-referencing-alias"),
        pytest.param("'tensorflow'.x", None, id="not-a-name"),
    ],
)
def test_resolution(code, expected):
    assert resolve_last(code) == expected


def test_comprehension_variable_does_not_leak():
    assert resolve_last("import tensorflow as tf\nys = [tf for tf in xs]\ntf.x\n") == "tensorflow.x"


def test_global_statement_reads_the_module_binding():
    assert (
        resolve_last("import tensorflow as tf\ndef f():\n    global tf\n    tf.x\n")
        == "tensorflow.x"
    )


def test_assignment_through_global_makes_the_module_name_unknown():
    assert (
        resolve_last("import tensorflow as tf\ndef f():\n    global tf\n    tf = 1\ntf.x\n") is None
    )


def test_one_name_in_two_scopes_resolves_in_each():
    """A read's resolution is kept per scope and name (Analysis.binding_of): `mp` bound to two
    modules in two functions resolves to each in its own, in either order of asking, and a read
    asked twice gives the same answer."""
    code = (
        "import tensorflow as tf\n"
        "def a():\n    mp = tf.keras.mixed_precision\n    mp.x\n    mp.x\n"
        "def b():\n    mp = tf.compat.v1.mixed_precision\n    mp.x\n"
        "x = x.y\nx.z\n"  # an alias of itself: never resolved
    )
    expected = [
        "tensorflow.keras.mixed_precision.x",
        "tensorflow.keras.mixed_precision.x",
        "tensorflow.compat.v1.mixed_precision.x",
        None,
    ]
    for order in (1, -1):
        tree = ast.parse(code)
        analysis = Analysis(tree)
        reads = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in "xz"]
        reads.sort(key=lambda n: (n.lineno, n.col_offset))
        answers = {id(n): analysis.qualified(n) for n in reads[::order]}
        assert [answers[id(n)] for n in reads] == expected
        assert [analysis.qualified(n) for n in reads] == expected


def test_parent_map_is_the_tree_as_ast_walks_it():
    """codemods.source.parent_map against the standard library's own walk, on modules with
    every kind of nesting this package's own code has (the name walk and resolution). Contexts
    and operators (`Load()`, `Add()`) are one shared object each in a parsed tree, so they have no
    single parent to compare."""
    text = "\n".join(
        Path(str(module.__file__)).read_text(encoding="utf-8")
        for module in (names_module, walk_module)
    )
    tree = ast.parse(text)
    shared = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
    reference = {
        id(child): node
        for node in ast.walk(tree)
        for child in ast.iter_child_nodes(node)
        if not isinstance(child, shared)
    }
    found = parent_map(tree)
    assert len(reference) > 2000
    assert {key: found[key] for key in reference} == reference


GATED = """\
import tensorflow as tf

if tf.__version__.startswith("2.3"):
    from tensorflow.python.training.experimental import loss_scale as ls
opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")
squares = [lambda y: y * y for y in range(3)]
"""


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_a_migration_leaves_nothing_for_the_cycle_collector(target):
    """Reference counting frees a module's tree and analysis as soon as its migration returns: a
    cycle among them (a binding and its scope, a recursive closure over a node) would hold the
    whole tree until the cycle collector ran, which cost a fifth of a `--check` on real code."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = migrate(GATED, target)
        assert result.findings  # the sweep ran, and looked for the gate
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if isinstance(o, ast.AST)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []


@pytest.mark.parametrize("text", [GATED, "def broken(:\n"], ids=["migrates", "does-not-parse"])
def test_the_cycle_collector_is_paused_only_while_a_module_migrates(text):
    """The engine pauses the collector (nothing it builds has a cycle) and restores it, even when
    the migration raises; a caller that paused it itself finds it paused still."""
    for enabled in (True, False):
        gc.enable() if enabled else gc.disable()
        try:
            with contextlib.suppress(MigrationError):
                migrate(text, "shim")
            assert gc.isenabled() is enabled
        finally:
            gc.enable()


USES = """\
import tensorflow as tf
mp = tf.keras.mixed_precision

def f(mp):
    return mp.x, mp.y

class C:
    mp = 1
    z = mp

def g():
    global mp
    mp = None
    return [mp for _ in range(2)], mp
"""


def test_the_uses_of_a_binding_are_the_loads_that_can_read_it():
    """Each binding's uses, asked twice and in any order, are exactly the loads of its name whose
    scope can see it (Python's rule: a class body is skipped from the functions inside it)."""
    tree = ast.parse(USES)
    analysis = Analysis(tree)
    bindings = [b for scope in analysis.scopes for bs in scope.bindings.values() for b in bs]
    expected = {
        id(b): [
            load.lineno
            for load in analysis.loads
            if load.id == b.name
            and b in (analysis.lookup(load.id, analysis.scope_of_load[id(load)]) or [])
        ]
        for b in bindings
    }
    for binding in [*reversed(bindings), *bindings]:
        assert [load.lineno for load in analysis.uses(binding)] == expected[id(binding)]
    mp = [b for b in bindings if b.name == "mp"]
    assert [len(analysis.uses(b)) for b in mp] == [2, 2, 2, 1]  # module (twice), f, C


CALLS = """\
import tensorflow as tf
from tensorflow.keras.mixed_precision import LossScaleOptimizer as LSO
from tensorflow.keras import mixed_precision as mp
a = tf.keras.mixed_precision.LossScaleOptimizer(opt)
b = LSO(opt)
c = mp.LossScaleOptimizer(mp.Policy("mixed_float16"))
d = tf.keras.optimizers.SGD(0.1)
e = self.LossScaleOptimizer(opt)
"""


def test_the_calls_to_some_names_are_those_whose_callee_means_one():
    """Against resolving every callee: an alias imported by name, attributes, a local look-alike."""
    analysis = Analysis(ast.parse(CALLS))
    wanted = {
        "tensorflow.keras.mixed_precision.LossScaleOptimizer",
        "tensorflow.keras.optimizers.SGD",
    }
    everything = [c for c in analysis.calls if analysis.qualified(c.func) in wanted]
    assert list(analysis.calls_to(wanted)) == everything
    assert [c.lineno for c in everything] == [4, 5, 6, 7]
