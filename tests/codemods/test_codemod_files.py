"""Files: what is skipped, byte preservation, atomic writes (notebooks: test_codemod_notebooks)."""

import os
import stat
from pathlib import Path

import pytest

from codemods import table
from codemods.cli import main
from codemods.io.files import discover
from codemods.io.prefilter import may_contain_targets

OLD = (
    "import tensorflow as tf\n"
    "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
)
NEW = "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"


def test_discovery_skips_vcs_virtualenvs_builds_and_gitignored(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n/top_only.py\n")
    for relative in [
        "src/a.py",
        ".git/hooks/x.py",
        "venv/lib/b.py",
        "myenv/c.py",
        "build/d.py",
        "generated/e.py",
        "src/f_pb2.py",
        "top_only.py",
        "src/top_only.py",
        "nb.ipynb",
        "notes.txt",
    ]:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("")
    found = sorted(p.relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)]))
    assert found == ["nb.ipynb", "src/a.py", "src/top_only.py"]


def test_prefilter_passes_targets_and_skips_the_rest():
    assert may_contain_targets(OLD.encode(), "keras2")
    assert may_contain_targets(
        b"from tensorflow.keras.mixed_precision import experimental as mp\n", "keras2"
    )
    assert may_contain_targets(b"print(opt.loss_scale())", "keras2")
    assert not may_contain_targets(
        b"import tensorflow as tf\ntf.config.experimental.list_physical_devices()\n", "keras2"
    )
    assert not may_contain_targets(b"opt.get_scaled_loss(loss)", "keras2")
    assert may_contain_targets(b"opt.get_scaled_loss(loss)", "keras3")


def _ways_in(target):
    """Every smallest set of the table's words that lets a file through, one per way in."""
    alone = [(word,) for word in table.PREFILTER_ALONE[target]]
    mixed = table.MIXED_PRECISION_WORDS
    dtype = [(table.DTYPE_NAME_WORD, w) for w in mixed if target in table.DTYPE_NAME_TARGETS]
    contrib = [(table.CONTRIB_WORD, "mixed_precision")]
    lr = [(lr, w) for lr in table.LR_WORDS for w in mixed]
    surface = [("mixed_float16", w) for w in table.SURFACE_WORDS if target != "keras2"]
    experimental = [(*table.PREFILTER_ALL, w) for w in table.PREFILTER_ANY]
    return alone + dtype + contrib + lr + surface + experimental


@pytest.mark.parametrize("target", table.TARGETS)
def test_the_prefilter_lets_through_every_way_in(target):
    """Each smallest set of words that makes a migration possible passes, alone in a file: the
    first test (a few words every way in needs) turns none of them away."""
    ways = _ways_in(target)
    assert len(ways) > 10
    refused = [w for w in ways if not may_contain_targets(" ".join(w).encode(), target)]
    assert refused == []
    assert not may_contain_targets(b"import tensorflow as tf\nmodel.fit(x)\n", target)


@pytest.mark.parametrize(
    ("encoding", "newline", "bom"),
    [
        ("utf-8", "\r\n", False),
        ("utf-8-sig", "\n", True),
        ("latin-1", "\n", False),
    ],
)
def test_encoding_bom_line_endings_and_missing_trailing_newline_are_kept(
    tmp_path, encoding, newline, bom
):
    header = "# -*- coding: latin-1 -*-\n# caf\xe9\n" if encoding == "latin-1" else "# caf\xe9\n"
    text = (header + OLD).rstrip("\n").replace("\n", newline)
    path = tmp_path / "a.py"
    path.write_bytes(text.encode(encoding))
    main(["--target", "keras2", str(path)])
    expected = (header + NEW).rstrip("\n").replace("\n", newline).encode(encoding)
    assert path.read_bytes() == expected
    assert path.read_bytes().startswith(b"\xef\xbb\xbf") == bom


def test_permissions_are_kept_and_no_temporary_file_is_left(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(OLD)
    os.chmod(path, 0o750)
    main(["--target", "keras2", str(path)])
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]


def test_file_without_targets_is_not_written(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("import tensorflow as tf  # mixed_precision experimental\n")
    before = path.stat().st_mtime_ns
    os.utime(path, ns=(before - 10**9, before - 10**9))
    main(["--target", "keras2", str(path)])
    assert path.stat().st_mtime_ns == before - 10**9


def test_an_explicit_directory_is_walked_even_where_git_would_ignore_it(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text(".venv/\n")
    package = tmp_path / ".venv" / "lib" / "pkg"
    package.mkdir(parents=True)
    (package / "a.py").write_text("")
    (package / ".gitignore").write_text("skip.py\n")
    (package / "skip.py").write_text("")
    assert [p.name for p in discover([str(package)])] == ["a.py"]
    assert list(discover([str(tmp_path)])) == []


def test_a_symlinked_file_is_rewritten_through_the_link(tmp_path):
    real = tmp_path / "real.py"
    real.write_text(OLD)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    main(["--target", "keras2", str(link)])
    assert link.is_symlink() and real.read_text() == NEW


def test_gitignore_follows_git_semantics_beyond_simple_globs(tmp_path: Path):
    # Escaped characters, a trailing-space rule, re-inclusion inside an ignored pattern, and a
    # nested .gitignore that re-includes what an outer one ignored: git's rules, via pathspec.
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("\\#literal.py\n*_gen.py\n!keep_gen.py\ndeep/**/out.py\n")
    for name in ("#literal.py", "a_gen.py", "keep_gen.py", "plain.py"):
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "deep" / "a" / "b").mkdir(parents=True)
    (tmp_path / "deep" / "a" / "b" / "out.py").write_text("x = 1\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".gitignore").write_text("!b_gen.py\n")
    (sub / "b_gen.py").write_text("x = 1\n")
    (sub / "c_gen.py").write_text("x = 1\n")
    found = {p.relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)])}
    assert found == {"keep_gen.py", "plain.py", "sub/b_gen.py"}
