"""One directory holding every kind of awkward file at once: each is migrated or reported clearly
(`path: error: ...` with what to do), exit status 2 when any is an error, and the rest of the run
goes on."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from codemods.cli import EXIT_ERROR

ROOT = Path(__file__).resolve().parents[2]
OLD = (
    "import tensorflow as tf\n"
    "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
)
NEW = "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
HUGE_FILLER = "value = compute(1, 2)  # mixed_precision experimental filler line\n"


@pytest.fixture
def awkward(tmp_path: Path) -> Path:
    (tmp_path / "good.py").write_text(OLD)
    (tmp_path / "non_utf8.py").write_bytes(b"# caf\xe9\n" + OLD.encode())
    (tmp_path / "latin1_cookie.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + OLD.encode()
    )
    (tmp_path / "bad_cookie.py").write_bytes(b"# -*- coding: no-such-codec -*-\n" + OLD.encode())
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + OLD.encode())
    (tmp_path / "crlf.py").write_bytes(OLD.replace("\n", "\r\n").encode())
    (tmp_path / "read_only.py").write_text(OLD)
    os.chmod(tmp_path / "read_only.py", 0o444)
    (tmp_path / "target.py").write_text(OLD)
    (tmp_path / "link.py").symlink_to("target.py")
    (tmp_path / "dangling.py").symlink_to("nowhere.py")
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "huge.py").write_text(HUGE_FILLER * (5_000_000 // len(HUGE_FILLER)) + OLD)
    (tmp_path / "syntax_error.py").write_text(
        "import tensorflow as tf\ntf.keras.mixed_precision.experimental.set_policy(\n"
    )
    (tmp_path / "too_deep.py").write_text(OLD + "total = " + " + ".join(["a"] * 1200) + "\n")
    (tmp_path / "nul_byte.py").write_bytes(OLD.encode() + b"x = 1\x00\n")
    return tmp_path


def test_every_awkward_file_is_migrated_or_reported_and_the_run_goes_on(awkward):
    before = {p.name: p.read_bytes() for p in awkward.iterdir() if p.is_file()}
    names = sorted(p.name for p in awkward.iterdir())
    completed = subprocess.run(
        [sys.executable, "-m", "codemods", "--target", "keras2", str(awkward)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert completed.returncode == EXIT_ERROR
    errors = {
        line.split(": error: ")[0]: line.split(": error: ", 1)[1]
        for line in completed.stderr.splitlines()
        if ": error: " in line
    }
    reported = {Path(path).name: message for path, message in errors.items()}
    assert set(reported) == {
        "non_utf8.py",
        "bad_cookie.py",
        "read_only.py",
        "dangling.py",
        "syntax_error.py",
        "too_deep.py",
        "nul_byte.py",
    }, completed.stderr
    # Each message says what is wrong, where, and what to do.
    assert "byte 0xe9 on line 1 is not UTF-8" in reported["non_utf8.py"]
    assert "coding: latin-1" in reported["non_utf8.py"]
    assert "no-such-codec" in reported["bad_cookie.py"] and "fix the" in reported["bad_cookie.py"]
    assert "read-only" in reported["read_only.py"] and "chmod u+w" in reported["read_only.py"]
    assert (
        "'nowhere.py'" in reported["dangling.py"] and "remove the link" in reported["dangling.py"]
    )
    assert (
        "line 2, column 49" in reported["syntax_error.py"]
        and "was never closed" in reported["syntax_error.py"]
    )
    assert "nested too deeply" in reported["too_deep.py"]
    assert "null bytes" in reported["nul_byte.py"]
    assert all(
        message.endswith(("left unchanged", "remove the link")) for message in reported.values()
    )
    assert (
        "rewrote 6 file(s); 0 finding(s) need manual work; 0 note(s); 7 error(s)"
        in completed.stderr
    )

    # Reported files are untouched, the read-only one keeps its mode; the others are migrated.
    for name in reported:
        if name != "dangling.py":
            assert (awkward / name).read_bytes() == before[name], name
    assert stat.S_IMODE((awkward / "read_only.py").stat().st_mode) == 0o444
    assert (awkward / "good.py").read_text() == NEW
    assert (
        awkward / "latin1_cookie.py"
    ).read_bytes() == b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + NEW.encode()
    assert (awkward / "bom.py").read_bytes() == b"\xef\xbb\xbf" + NEW.encode()
    assert (awkward / "crlf.py").read_bytes() == NEW.replace("\n", "\r\n").encode()
    assert (awkward / "link.py").is_symlink() and (awkward / "target.py").read_text() == NEW
    assert (awkward / "empty.py").read_bytes() == b""
    assert (awkward / "huge.py").read_bytes().endswith(NEW.encode().split(b"\n", 1)[1])
    assert (awkward / "huge.py").read_bytes().startswith(HUGE_FILLER.encode())
    assert (awkward / "dangling.py").is_symlink()
    assert sorted(p.name for p in awkward.iterdir()) == names, "no temporary file is left"


def test_check_mode_does_not_report_read_only(awkward):
    # Nothing is written with --check, so a read-only file is just a file to look at.
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "codemods",
            "--check",
            "--target",
            "keras2",
            str(awkward / "read_only.py"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1 and "error" not in completed.stderr.replace("0 error(s)", "")
