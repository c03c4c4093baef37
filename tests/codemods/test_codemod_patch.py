"""--diff: a patch that git apply and patch -p1 accept, on the forms of real files
(tests/codemods/forms/) and on special files, in each file's own bytes."""

import shutil
import subprocess
from pathlib import Path

import pytest

from codemods.cli import EXIT_FINDINGS, main
from codemods.io.files import discover

FORMS = Path(__file__).parent / "forms"
OLD = "import tensorflow as tf\ntf.keras.mixed_precision.experimental.set_policy('mixed_float16')"

# Files whose bytes a text-mode diff would get wrong.
SPECIAL = {
    "no_final_newline.py": OLD.encode(),
    "crlf.py": (OLD + "\n").replace("\n", "\r\n").encode(),
    "latin1.py": ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + OLD + "\n").encode("latin-1"),
    "bom.py": b"\xef\xbb\xbf" + (OLD + "\n").encode(),
    "form_feed.py": ("# section\n\x0c\n" + OLD + "\n\x0c\nx = 1\n").encode(),
    "only_line.py": b"import tensorflow as tf; tf.keras.mixed_precision.experimental.set_policy(p)",
}


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in discover([str(root)])}


def _repository(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(FORMS, root, ignore=shutil.ignore_patterns("expected", "*.md"))
    for file, data in SPECIAL.items():
        (root / file).write_bytes(data)
    return root


def _git(root: Path, *args: str, stdin: bytes | None = None) -> None:
    subprocess.run(["git", *args], cwd=root, input=stdin, check=True, capture_output=True)


@pytest.fixture(scope="module")
def patched(tmp_path_factory):
    """The forms and the special files: the --diff output, and the tree write mode leaves."""
    tmp_path = tmp_path_factory.mktemp("patch")
    source = _repository(tmp_path, "source")
    written = _repository(tmp_path, "written")
    main(["--target", "keras2", "-j", "1", "-q", str(written)])
    return source, _tree(written)


def _diff(monkeypatch, capsysbinary, root: Path) -> tuple[bytes, bytes]:
    monkeypatch.chdir(root)
    assert main(["--diff", "--target", "keras2", "-j", "1", "."]) == EXIT_FINDINGS
    captured = capsysbinary.readouterr()
    return captured.out, captured.err


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_apply_gives_what_write_mode_writes(patched, tmp_path, monkeypatch, capsysbinary):
    source, expected = patched
    root = tmp_path / "repo"
    shutil.copytree(source, root)
    _git(root, "init", "-q")
    out, err = _diff(monkeypatch, capsysbinary, root)
    assert out.startswith(b"--- a/"), "stdout holds the patch and nothing else"
    assert b"LSO004 [*]" in err and b"LSO004" not in out.split(b"\n@@")[0]
    _git(root, "apply", "--check", "-", stdin=out)
    _git(root, "apply", "-", stdin=out)
    assert _tree(root) == expected


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
def test_patch_p1_gives_what_write_mode_writes(patched, tmp_path, monkeypatch, capsysbinary):
    source, expected = patched
    root = tmp_path / "tree"
    shutil.copytree(source, root)
    out, _ = _diff(monkeypatch, capsysbinary, root)
    subprocess.run(
        ["patch", "-p1", "--batch", "--binary"],
        cwd=root,
        input=out,
        check=True,
        capture_output=True,
    )
    assert _tree(root) == expected


def test_a_last_line_without_newline_is_marked(tmp_path, monkeypatch, capsysbinary):
    (tmp_path / "a.py").write_bytes(SPECIAL["no_final_newline.py"])
    out, _ = _diff(monkeypatch, capsysbinary, tmp_path)
    assert out.endswith(
        b"-tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n"
        b"\\ No newline at end of file\n"
        b"+tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
        b"\\ No newline at end of file\n"
    )


def test_each_file_keeps_its_encoding_in_the_patch(tmp_path, monkeypatch, capsysbinary):
    for name in ("latin1.py", "bom.py", "crlf.py"):
        (tmp_path / name).write_bytes(SPECIAL[name])
    out, _ = _diff(monkeypatch, capsysbinary, tmp_path)
    assert b" # caf\xe9\n" in out, "latin-1 bytes, as on disk"
    assert b"-\xef\xbb\xbfimport tensorflow as tf\n" not in out, "the BOM line is context"
    assert b"\r\n+tf.keras.mixed_precision.set_global_policy('mixed_float16')\r\n" in out


def test_paths_outside_the_current_directory_are_absolute_without_the_slash(tmp_path, monkeypatch):
    from codemods.io.patch import patch_path

    inside = tmp_path / "work"
    inside.mkdir()
    monkeypatch.chdir(inside)
    assert patch_path("src/a.py") == "src/a.py"
    assert patch_path(str(inside / "b.py")) == "b.py"
    assert patch_path(str(tmp_path / "other.py")) == (tmp_path / "other.py").as_posix().lstrip("/")
