"""Notebooks: code cells migrated as one module, IPython syntax kept byte for byte, cells named."""

import json
from pathlib import Path

import pytest

from codemods.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, main
from codemods.io.notebooks import mask_ipython, migrate_notebook

IMPORT = "from tensorflow.keras.mixed_precision import experimental as mp\n"
NEW_IMPORT = "from tensorflow.keras import mixed_precision as mp\n"
MARKDOWN = {"cell_type": "markdown", "metadata": {}, "source": ["# mixed_precision.experimental\n"]}


def _notebook(*cells: str | dict) -> dict:
    return {
        "cells": [
            cell
            if isinstance(cell, dict)
            else {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {},
                "outputs": [],
                "source": cell.splitlines(keepends=True),
            }
            for cell in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _write(tmp_path: Path, *cells: str | dict) -> Path:
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(_notebook(*cells), indent=1) + "\n")
    return path


def _cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


def test_code_cells_are_migrated_across_cells_with_magics_kept(tmp_path):
    path = _write(
        tmp_path,
        "%matplotlib inline\n" + IMPORT.rstrip("\n"),
        "!pip list\nopt = mp.LossScaleOptimizer(opt, 'dynamic')\n",
        "%%bash\necho hi\n",
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["tf.keras.mixed_precision.experimental"],
        },
    )
    assert main(["--target", "keras2", str(path)]) == EXIT_FINDINGS
    assert _cells(path) == [
        "%matplotlib inline\n" + NEW_IMPORT.rstrip("\n"),
        "!pip list\nopt = mp.LossScaleOptimizer(opt)\n",
        "%%bash\necho hi\n",
        "tf.keras.mixed_precision.experimental",
    ]


COLAB = (
    "import sys\n"
    "if 'google.colab' in sys.modules:\n"
    "    !pip install -q tensorflow==2.3\n"
    "    %cd /content\n"
    "    files = !ls\n"
    "    !pip install a \\\n"
    "        b\n"
    "else:\n"
    "    %pwd\n"
    "tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n"
    "tf.keras.mixed_precision.experimental?\n"
)


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_ipython_lines_inside_blocks_are_kept_and_the_python_around_them_migrated(tmp_path, target):
    path = _write(tmp_path, "import tensorflow as tf\n", COLAB)
    assert main(["--target", target, str(path)]) == EXIT_FINDINGS
    expected = COLAB.replace("experimental.set_policy", "set_global_policy")
    if target == "shim":  # compile() under the policy wraps as under `run` (LSO023)
        expected = expected.replace("import sys\n", "import sys\n\ncompat_lso.install()\n", 1)
    assert _cells(path)[1] == expected


@pytest.mark.parametrize(
    "magic", ["%%time", "%%timeit -n 1", "%%capture captured --no-stderr", "%%prun"]
)
def test_python_cell_magics_are_migrated_inside(tmp_path, magic):
    path = _write(tmp_path, IMPORT, f"{magic}\nmp.set_policy('mixed_float16')\n")
    assert main(["--target", "keras2", str(path)]) == EXIT_FINDINGS
    assert _cells(path) == [NEW_IMPORT, f"{magic}\nmp.set_global_policy('mixed_float16')\n"]


@pytest.mark.parametrize("magic", ["%%bash", "%%writefile train.py", "%%html", "%%script python2"])
def test_other_cell_magics_are_not_python_and_left_alone(tmp_path, magic):
    cell = (
        f"{magic}\nimport tensorflow as tf\ntf.keras.mixed_precision.experimental.set_policy(x)\n"
    )
    path = _write(tmp_path, cell)
    before = path.read_bytes()
    assert main(["--target", "keras2", str(path)]) == EXIT_CLEAN
    assert path.read_bytes() == before


def test_percent_inside_brackets_is_python_not_a_magic():
    cell = "x = (a\n     %b)\ny = '''\n!not a command\n'''\n"
    assert mask_ipython(cell) == cell


def test_masks_keep_every_line_length():
    masked = mask_ipython(COLAB)
    assert [len(line) for line in masked.splitlines()] == [len(line) for line in COLAB.splitlines()]
    assert "    0#ip install -q tensorflow==2.3\n" in masked


def test_a_notebook_with_nothing_to_migrate_never_errors(tmp_path, capsys):
    # Automagic (`pip install` without `!`) is not Python even masked; the markdown mentions the
    # API, so the prefilter lets the file through.
    path = _write(
        tmp_path,
        MARKDOWN,
        "pip install tensorflow\ntf.config.experimental.list_physical_devices('GPU')\n",
        "import os\n%%time\n",
    )
    before = path.read_bytes()
    assert main(["--check", str(path)]) == EXIT_CLEAN
    assert path.read_bytes() == before
    assert "error:" not in capsys.readouterr().err


def test_an_unparsable_cell_that_uses_the_old_api_is_an_error_naming_the_cell(tmp_path, capsys):
    path = _write(tmp_path, MARKDOWN, IMPORT, "pip install x\nmp.set_policy('mixed_float16')\n")
    before = path.read_bytes()
    assert main(["--target", "keras2", str(path)]) == EXIT_ERROR
    assert path.read_bytes() == before
    err = capsys.readouterr().err
    assert "cell 3, line 1: invalid syntax" in err and "cells count from 1" in err


def test_an_unparsable_cell_beside_cells_to_migrate_is_an_error(tmp_path, capsys):
    # The unparsable cell could use `mp` (here it does, through a name the check cannot see).
    path = _write(tmp_path, IMPORT, "pip install x\nalias = mp\n", "mp.set_policy('float32')\n")
    before = path.read_bytes()
    assert main(["--target", "keras2", str(path)]) == EXIT_ERROR
    assert path.read_bytes() == before
    assert "cell 2, line 1" in capsys.readouterr().err


def test_findings_name_the_cell_counting_from_1_with_markdown_cells(tmp_path, capsys):
    path = _write(
        tmp_path,
        MARKDOWN,
        "import tensorflow as tf\n",
        "x = 1\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(o, s())\n",
    )
    assert main(["--check", "--target", "keras2", str(path)]) == EXIT_FINDINGS
    assert f"{path}:2:7: LSO001 [cell 3]" in capsys.readouterr().out


def test_the_lines_a_finding_names_are_counted_in_their_cells():
    # The import in cell 1 stays for the run-time uses in cells 2 and 3: LSO101 names them as
    # the notebook shows them, not as lines of the cells joined into one module.
    cells = (
        IMPORT + "x = 1\n",
        "a = mp.LossScaleOptimizer(o, s())\nb = mp.LossScaleOptimizer(o, t())\n",
        "c = mp.LossScaleOptimizer(o, u())\n",
    )
    result = migrate_notebook(json.dumps(_notebook(*cells)), "keras2", None)
    (kept,) = [f for f in result.findings if f.code == "LSO101"]
    assert kept.message.startswith("[cell 1] import of ")
    assert (
        kept.help
        == "migrate its uses at lines 1, 2 of cell 2; 1 of cell 3, then run the codemod again"
    )


def test_write_mode_findings_point_into_the_cell_as_written():
    # --target shim inserts `import compat_lso` at the top of cell 1: the manual finding below it
    # moves down one line in write mode, and stays where it was in the original for --check.
    cells = (
        "import tensorflow as tf\n"
        "a = tf.keras.mixed_precision.experimental.LossScaleOptimizer(o, 'dynamic')\n"
        "tf.keras.mixed_precision.experimental.get_layer_policy(layer)\n"
    )
    text = json.dumps(_notebook(cells))
    original = migrate_notebook(text, "shim", None)
    written = migrate_notebook(text, "shim", None, as_written=True)
    assert [(f.line, f.col) for f in original.findings if not f.fixed] == [(3, 1)]
    assert [(f.line, f.col) for f in written.findings if not f.fixed] == [(4, 1)]
    new_cell = "".join(json.loads(written.text)["cells"][0]["source"])
    assert new_cell.splitlines()[3].startswith("tf.keras.mixed_precision.experimental.get_layer")


def test_a_future_import_below_the_first_cell_is_not_an_error_when_nothing_is_migrated(tmp_path):
    # IPython compiles each cell on its own, so `from __future__` may open any cell; joined into
    # one module it would not parse.
    path = _write(tmp_path, MARKDOWN, "import os\n", "from __future__ import annotations\nx = 1\n")
    assert main(["--check", str(path)]) == EXIT_CLEAN


def test_a_future_import_below_the_first_cell_is_migrated_like_any_cell(tmp_path):
    path = _write(tmp_path, IMPORT, "from __future__ import annotations\nmp.set_policy(p)\n")
    assert main(["--target", "keras2", str(path)]) == EXIT_FINDINGS
    assert _cells(path) == [
        NEW_IMPORT,
        "from __future__ import annotations\nmp.set_global_policy(p)\n",
    ]
