"""The command line: modes, exit codes, formats, stdin, rule selection, errors."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import compat_lso
from codemods import table
from codemods.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, main
from codemods.io import formats

OLD = (
    "import tensorflow as tf\n"
    "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
)
NEW = "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
MANUAL = (
    "import tensorflow as tf\n"
    "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, get_scale())\n"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "old.py").write_text(OLD)
    (tmp_path / "pkg" / "clean.py").write_text("import os\n")
    return tmp_path


def run(*argv: str) -> int:
    return main(list(argv))


def test_write_mode_rewrites_and_exits_1(tree, capsys):
    assert run("--target", "keras2", str(tree)) == EXIT_FINDINGS
    assert (tree / "pkg" / "old.py").read_text() == NEW
    assert run("--target", "keras2", str(tree)) == EXIT_CLEAN, "a second run has nothing to do"


def test_check_writes_nothing_and_lists_findings(tree, capsys):
    assert run("--check", "--target", "keras2", str(tree)) == EXIT_FINDINGS
    assert (tree / "pkg" / "old.py").read_text() == OLD
    out = capsys.readouterr().out
    assert f"{tree / 'pkg' / 'old.py'}:2:7: LSO001 [*] " in out


# The manual finding for MANUAL on keras2: the fact at the line, the rule's instruction as help.
MANUAL_FACT = (
    "tf.keras.mixed_precision.experimental.LossScaleOptimizer not rewritten: "
    "loss_scale=get_scale() is only known at run time"
)
MANUAL_HELP = table.RULES_BY_CODE["LSO001"].instruction_on("keras2")


def test_text_prints_the_fact_then_the_help_on_its_own_line(tmp_path, capsys):
    (tmp_path / "a.py").write_text(MANUAL)
    assert run("--check", "--target", "keras2", str(tmp_path)) == EXIT_FINDINGS
    assert capsys.readouterr().out == (
        f"{tmp_path / 'a.py'}:2:7: LSO001 {MANUAL_FACT}\n  help: {MANUAL_HELP}\n"
    )


def test_a_rewrite_has_no_help_line(tree, capsys):
    run("--check", "--target", "keras2", str(tree))
    assert capsys.readouterr().out == (
        f"{tree / 'pkg' / 'old.py'}:2:7: LSO001 [*] "
        "tf.keras.mixed_precision.experimental.LossScaleOptimizer -> "
        "mixed_precision.LossScaleOptimizer\n"
    )


def test_statistics_prints_one_line_per_rule_with_its_split(tmp_path, capsys):
    (tmp_path / "a.py").write_text(MANUAL)
    (tmp_path / "b.py").write_text(OLD + "tf.keras.mixed_precision.experimental.set_policy('x')\n")
    assert run("--check", "--statistics", "--target", "keras2", str(tmp_path)) == EXIT_FINDINGS
    assert capsys.readouterr().out.splitlines() == [
        "2  LSO001  [*]     loss-scale-optimizer-call  (1 fixed, 1 manual)",
        "1  LSO004  [*]     set-policy  (1 fixed)",
        "manual, by reason:",
        "  1  run-time  a value or type only known when the program runs",
        "share fixed (keras2): 66.7% (2 fixed, 1 manual; notes not counted)",
    ]
    run("--check", "--statistics", "--format", "json", "--target", "keras2", str(tmp_path))
    rows = json.loads(capsys.readouterr().out)
    assert rows[0] == {
        "code": "LSO001",
        "name": "loss-scale-optimizer-call",
        "count": 2,
        "fixed": 1,
        "manual": 1,
        "note": 0,
    }
    assert rows[-1] == {
        "target": "keras2",
        "fixed": 2,
        "manual": 1,
        "share_fixed": 0.6667,
        "by_reason": {"run-time": 1},
    }


def test_statistics_share_fixed_is_rounded_once():
    # 85 / 117 = 0.72649...: 72.6%, not 72.7% from the share already rounded to 0.7265.
    share = formats.share_fixed([{"fixed": 85, "manual": 32}], "shim")
    assert share["share_fixed"] == 0.7265
    assert formats.share_fixed_text(share) == (
        "share fixed (shim): 72.6% (85 fixed, 32 manual; notes not counted)"
    )


def test_statistics_share_fixed_leaves_notes_out(tmp_path, capsys):
    # keras3 notes each loss scale optimizer (LSO022): a note is neither fixed nor manual work.
    (tmp_path / "a.py").write_text(OLD + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\n")
    run("--check", "--statistics", "--target", "keras3", str(tmp_path))
    out = capsys.readouterr().out.splitlines()
    assert any("LSO022  [note]" in line for line in out), out
    assert out[-1] == "share fixed (keras3): 100.0% (1 fixed, 0 manual; notes not counted)"
    (tmp_path / "a.py").write_text("x = 1\n")
    run("--check", "--statistics", "--format", "json", "--target", "shim", str(tmp_path))
    assert json.loads(capsys.readouterr().out) == [
        {"target": "shim", "fixed": 0, "manual": 0, "share_fixed": None, "by_reason": {}}
    ]


def test_statistics_refuses_github_and_sarif(capsys):
    with pytest.raises(SystemExit):
        run("--statistics", "--format", "sarif", ".")
    assert "--statistics prints text or json, not --format sarif" in capsys.readouterr().err


def test_check_on_a_clean_tree_exits_0(tmp_path):
    # NEW is clean for keras2; on the default shim target LSO015 moves its class to compat_lso.
    (tmp_path / "a.py").write_text(NEW)
    (tmp_path / "b.py").write_text("import compat_lso\nopt = compat_lso.LossScaleOptimizer(opt)\n")
    assert run("--check", "--target", "keras2", str(tmp_path)) == EXIT_CLEAN
    (tmp_path / "a.py").unlink()
    assert run("--check", str(tmp_path)) == EXIT_CLEAN


def test_manual_findings_alone_exit_1(tmp_path, capsys):
    (tmp_path / "a.py").write_text(MANUAL)
    assert run("--target", "keras2", str(tmp_path)) == EXIT_FINDINGS
    assert (tmp_path / "a.py").read_text() == MANUAL
    assert ":2:7: LSO001 " in capsys.readouterr().out


def test_diff(tree, capsys):
    assert run("--diff", "--target", "keras2", str(tree / "pkg" / "old.py")) == EXIT_FINDINGS
    out = capsys.readouterr().out
    assert "-opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')" in out
    assert "+opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)" in out
    assert (tree / "pkg" / "old.py").read_text() == OLD


def test_unparsable_file_is_reported_left_untouched_and_the_rest_processed(tree, capsys):
    broken = "import tensorflow as tf\ntf.keras.mixed_precision.experimental.set_policy(\n"
    (tree / "pkg" / "broken.py").write_text(broken)
    assert run("--target", "keras2", str(tree)) == EXIT_ERROR
    assert (tree / "pkg" / "broken.py").read_text() == broken
    assert (tree / "pkg" / "old.py").read_text() == NEW
    assert "broken.py: error:" in capsys.readouterr().err


def test_stdin_to_stdout(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(OLD.encode())))
    assert run("--target", "keras2", "-") == EXIT_FINDINGS
    assert capsys.readouterr().out == NEW


@pytest.mark.parametrize(("option", "expected"), [("--only", OLD), ("--skip", OLD)])
def test_rule_selection(tree, option, expected):
    assert (
        run(option, "LSO001" if option == "--skip" else "LSO004", "--target", "keras2", str(tree))
        == EXIT_CLEAN
    )
    assert (tree / "pkg" / "old.py").read_text() == expected


def test_unknown_rule_code_names_the_argument_and_the_fix(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run("--only", "LSO999", ".")
    assert exit_info.value.code == EXIT_ERROR
    err = capsys.readouterr().err
    assert "--only: unknown rule code(s) LSO999" in err and "--list-rules" in err


def test_missing_path_is_a_clear_error(capsys):
    with pytest.raises(SystemExit):
        run("does/not/exist.py")
    assert "path 'does/not/exist.py' does not exist" in capsys.readouterr().err


def test_list_rules_prints_every_code(capsys):
    assert run("--list-rules") == EXIT_CLEAN
    lines = capsys.readouterr().out.splitlines()
    # A header, then one line per rule of the table, in order, LSO014 and any later one included.
    assert [line.split()[0] for line in lines[1:]] == [rule.code for rule in table.RULES]
    assert {"LSO001", "LSO014"} <= {rule.code for rule in table.RULES}


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run("--version")
    assert exit_info.value.code == EXIT_CLEAN
    assert capsys.readouterr().out == f"compat-lso-migrate {compat_lso.__version__}\n"


def test_json_format(tmp_path, capsys):
    (tmp_path / "a.py").write_text(MANUAL)
    assert run("--check", "--format", "json", "--target", "keras2", str(tmp_path)) == EXIT_FINDINGS
    [finding] = json.loads(capsys.readouterr().out)
    assert finding == {
        "path": str(tmp_path / "a.py"),
        "line": 2,
        "col": 7,
        "code": "LSO001",
        "message": MANUAL_FACT,
        "help": MANUAL_HELP,
        "docs": "docs/rules.md#lso001-loss-scale-optimizer-call",
        "fixable": False,
        "kind": "manual",
        "reason": "run-time",
    }


def test_github_format(tmp_path, capsys):
    (tmp_path / "a.py").write_text(MANUAL)
    assert (
        run("--check", "--format", "github", "--target", "keras2", str(tmp_path)) == EXIT_FINDINGS
    )
    assert capsys.readouterr().out == (
        f"::warning file={tmp_path / 'a.py'},line=2,col=7,title=LSO001::"
        f"{MANUAL_FACT}%0Ahelp: {MANUAL_HELP}\n"
    )


def test_sarif_format(tmp_path, capsys):
    (tmp_path / "a.py").write_text(MANUAL)
    assert run("--check", "--format", "sarif", "--target", "keras2", str(tmp_path)) == EXIT_FINDINGS
    log = json.loads(capsys.readouterr().out)
    assert log["version"] == "2.1.0"
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "LSO001"
    assert result["message"] == {"text": MANUAL_FACT}
    assert result["properties"] == {"help": MANUAL_HELP, "reason": "run-time"}
    [rule] = [r for r in log["runs"][0]["tool"]["driver"]["rules"] if r["id"] == "LSO001"]
    assert rule["properties"] == {"docs": "docs/rules.md#lso001-loss-scale-optimizer-call"}
    assert rule["help"] == {"text": table.RULES_BY_CODE["LSO001"].instruction}
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2,
        "startColumn": 7,
    }


def test_jobs_give_the_same_result_as_one_process(tmp_path):
    for index in range(12):
        (tmp_path / f"m{index}.py").write_text(OLD if index % 2 else MANUAL)
    assert run("--jobs", "2", "--target", "keras2", str(tmp_path)) == EXIT_FINDINGS
    assert [(tmp_path / f"m{i}.py").read_text() for i in range(12)] == [
        NEW if i % 2 else MANUAL for i in range(12)
    ]


def test_python_dash_m_entry_point(tree):
    completed = subprocess.run(
        [sys.executable, "-m", "codemods", "--check", str(tree)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == EXIT_FINDINGS, completed.stderr


def _run_with_stderr_on_a_terminal(*argv: str) -> str:
    """Run the CLI with stderr on a pseudo-terminal (stdout piped); what the terminal showed."""
    pty = pytest.importorskip("pty")
    import fcntl
    import os
    import struct
    import termios

    leader, follower = pty.openpty()
    # A real terminal's size (a fresh pty says 0 columns, and a bar 0 columns wide shows nothing).
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "codemods", *argv],
            stdout=subprocess.DEVNULL,
            stderr=follower,
            cwd=Path(__file__).resolve().parents[2],
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=60) in (EXIT_CLEAN, EXIT_FINDINGS)
    finally:
        os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def many_files(tmp_path: Path) -> Path:
    for index in range(60):
        (tmp_path / f"m{index}.py").write_text(OLD if index == 0 else "import os\n")
    return tmp_path


def test_progress_bar_on_a_terminal(many_files):
    shown = _run_with_stderr_on_a_terminal("--check", "--jobs", "1", str(many_files))
    assert "compat-lso-migrate:" in shown and "/60" in shown, shown
    assert "would rewrite 1 file(s)" in shown


def test_no_progress_bar_with_quiet_even_on_a_terminal(many_files):
    shown = _run_with_stderr_on_a_terminal("--check", "--quiet", "--jobs", "1", str(many_files))
    assert "/60" not in shown and "would rewrite" not in shown, shown


def test_no_progress_bar_when_stderr_is_piped(many_files):
    completed = subprocess.run(
        [sys.executable, "-m", "codemods", "--check", "--jobs", "2", str(many_files)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert completed.returncode == EXIT_FINDINGS
    assert (
        completed.stderr
        == "would rewrite 1 file(s); 0 finding(s) need manual work; 0 note(s); 0 error(s)\n"
    )


def test_warnings_about_the_users_code_are_not_printed(tmp_path):
    # `"\d"` warns when compiled (DeprecationWarning on 3.11, SyntaxWarning from 3.12): not ours
    # to print.
    (tmp_path / "a.py").write_text('import re\npattern = re.compile("\\d+")\n' + OLD)
    completed = subprocess.run(
        [sys.executable, "-W", "always", "-m", "codemods", "--target", "keras2", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert completed.returncode == EXIT_FINDINGS
    assert "Warning" not in completed.stderr, completed.stderr


SHIFTED = (
    "import tensorflow as tf\n"
    "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
    "p = tf.keras.mixed_precision.experimental.global_policy(); "
    "q = tf.keras.mixed_precision.experimental.get_layer_policy(layer)\n"
)


def _position(text: str, line: int, col: int) -> str:
    return text.splitlines()[line - 1][col - 1 :]


# Where get_layer_policy starts on line 3, before and after global_policy loses `experimental.`.
ORIGINAL_COL = SHIFTED.splitlines()[2].index("tf.keras.mixed_precision.experimental.get_l") + 1
WRITTEN_COL = ORIGINAL_COL - len("experimental.")


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_write_mode_findings_point_into_the_file_as_written(tmp_path, capsys, target):
    # shim inserts `import compat_lso` (every line below moves down one); on both targets the
    # global_policy rewrite before get_layer_policy shortens its line (its column moves left).
    path = tmp_path / "a.py"
    path.write_text(SHIFTED)
    assert run("--target", target, "--format", "json", str(path)) == EXIT_FINDINGS
    written = path.read_text()
    findings = json.loads(capsys.readouterr().out)
    manual = [f for f in findings if not f["fixable"]]
    assert [f["code"] for f in manual] == ["LSO012"]
    line = 4 if target == "shim" else 3
    assert (manual[0]["line"], manual[0]["col"]) == (line, WRITTEN_COL)
    assert _position(written, manual[0]["line"], manual[0]["col"]).startswith(
        "tf.keras.mixed_precision.experimental.get_layer_policy(layer)"
    )
    for fixed in (f for f in findings if f["fixable"]):  # at the start of what replaced them
        replaced = _position(written, fixed["line"], fixed["col"])
        assert replaced.startswith(("compat_lso.", "tf.keras.mixed_precision.")), fixed


@pytest.mark.parametrize("mode", ["--check", "--diff"])
def test_check_and_diff_findings_point_into_the_original(tmp_path, capsys, mode):
    path = tmp_path / "a.py"
    path.write_text(SHIFTED)
    assert run(mode, "--target", "shim", str(path)) == EXIT_FINDINGS
    captured = capsys.readouterr()
    listing = captured.err if mode == "--diff" else captured.out
    assert f"{path}:3:{ORIGINAL_COL}: LSO012 " in listing
    assert _position(SHIFTED, 3, ORIGINAL_COL).startswith(
        "tf.keras.mixed_precision.experimental.get_layer"
    )
    assert path.read_text() == SHIFTED


def test_the_readme_shows_what_the_command_prints(monkeypatch, capsys):
    # README's capture of the two-line findings is real output: it must stay so.
    root = Path(__file__).resolve().parents[2]
    command = "compat-lso-migrate --check --target keras3 examples/legacy_project/"
    readme = (root / "README.md").read_text(encoding="utf-8")
    shown = readme.split(f"$ {command}\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(root)
    assert main(command.split()[1:]) == EXIT_FINDINGS
    captured = capsys.readouterr()
    assert captured.out + captured.err == shown
