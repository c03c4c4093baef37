"""Name resolution: imports and aliases by meaning, scopes and shadowing."""

import ast

import pytest

from codemods.meaning.names import Analysis


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
