"""The README's Python examples run as written on this backend (its quick start:
test_readme_quick_start.py)."""

from __future__ import annotations

import pathlib
import re
import warnings

import pytest

README = pathlib.Path(__file__).parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


@pytest.mark.parametrize("source", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        exec(compile(source, str(README), "exec"), {})


def test_readme_has_python_examples():
    assert BLOCKS
