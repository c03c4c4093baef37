"""The house rules of both packages, and docs/architecture.md, checked from the sources.

No import circle (a stage hands its result down; what two stages share sits below both), stages
that import only the stages below them (STAGES in docs/scripts/architecture.py), at most four
modules at each package's top, no module over 400 lines, and the architecture page is what
docs/scripts/architecture.py renders from the code today. Reads the sources with `ast` only: no
TensorFlow, no import of either package.
"""

from __future__ import annotations

import importlib.util
import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAX_LINES = 400

_spec = importlib.util.spec_from_file_location(
    "architecture", ROOT / "docs" / "scripts" / "architecture.py"
)
assert _spec is not None and _spec.loader is not None
architecture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(architecture)

PACKAGES = [
    pytest.param("codemods", id="codemods"),
    pytest.param("compat_lso", id="compat_lso"),
]


def test_the_page_is_generated_from_the_code():
    page = ROOT / "docs" / "architecture.md"
    assert page.read_text(encoding="utf-8") == architecture.render(), (
        "run: python docs/scripts/architecture.py > docs/architecture.md"
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle(package):
    assert architecture.cycles(architecture.import_graph(package)) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_over_400_lines(package):
    long = {name: n for name, n in architecture.line_counts(package).items() if n > MAX_LINES}
    assert long == {}


@pytest.mark.parametrize("package", PACKAGES)
def test_stages_import_only_downward(package):
    assert architecture.upward_imports(package) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_at_most_four_modules_at_the_top(package):
    # The rest lives in a folder named for its stage (docs/architecture.md lists them).
    assert len(architecture.top_level_modules(package)) <= 4, architecture.top_level_modules(
        package
    )


def _package(root: pathlib.Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    # The detector must be able to fail: `a` imports `b` at the top, `b` imports `a` inside a
    # function (the usual way a circle is hidden), `c` only under TYPE_CHECKING (never run).
    _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg import b\n",
            "b.py": "def late():\n    from . import a\n",
            "c.py": """\
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from pkg.a import thing
                from pkg.sub.d import e
            """,
            "sub/__init__.py": "",
            "sub/d.py": "import pkg.c\n",
        },
    )
    graph = architecture.import_graph("pkg", tmp_path)
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.a"}
    assert graph["pkg.c"] == {"pkg.sub.d"}
    assert graph["pkg.sub.d"] == {"pkg.c"}
    assert architecture.cycles(graph) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.sub.d"]]
    del graph["pkg.b"]
    assert architecture.cycles(graph) == [["pkg.c", "pkg.sub.d"]]
