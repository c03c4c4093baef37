"""docs/testing.md shows what the CLI really prints for the fixtures it names."""

from __future__ import annotations

import pathlib
import re
import shlex

import pytest

from compat_lso.testing import check_config as _check_config

ROOT = pathlib.Path(__file__).parent.parent.parent
DOC = ROOT / "docs" / "testing.md"
# Each `$ compat-lso-check-config ...` line of a console block, and the lines it prints.
SESSIONS = re.findall(
    r"^\$ compat-lso-check-config (.+)\n((?:(?!\$ |```).*\n)*)",
    DOC.read_text(),
    flags=re.MULTILINE,
)


def test_the_doc_shows_cli_sessions():
    assert len(SESSIONS) >= 2


@pytest.mark.parametrize("arguments, printed", SESSIONS, ids=[a for a, _ in SESSIONS])
def test_each_cli_session_in_the_doc_prints_what_it_shows(monkeypatch, capsys, arguments, printed):
    monkeypatch.chdir(ROOT)
    status = _check_config.main(shlex.split(arguments))
    assert capsys.readouterr().out == printed
    assert status == (0 if printed.endswith("equivalent LossScaleOptimizer configs\n") else 1)
