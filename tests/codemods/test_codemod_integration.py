"""The libcst.tool command and the pre-commit hook definitions."""

import subprocess
import sys
from pathlib import Path

import yaml

from codemods import table

ROOT = Path(__file__).resolve().parents[2]
OLD = (
    "import tensorflow as tf\n"
    "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
)
NEW = "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"


def _libcst_tool(target: Path, to: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "libcst.tool",
            "codemod",
            "migrate_loss_scale.MigrateLossScaleCommand",
            "--target",
            to,
            "--no-format",
            str(target),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        check=False,
    )


def test_libcst_tool_runs_the_same_transform(tmp_path):
    target = tmp_path / "train.py"
    target.write_text(OLD)
    completed = _libcst_tool(target, "keras2")
    assert completed.returncode == 0, completed.stderr
    assert target.read_text() == NEW
    assert "LSO" not in completed.stderr  # a safe rewrite: nothing to warn about


def test_libcst_tool_warns_with_the_notes(tmp_path):
    # On keras3 the rewrite is safe, and LSO022 notes that Keras 3's class counts skipped steps
    # otherwise: libcst's runner has no notes, so it must be a warning, not dropped.
    target = tmp_path / "train.py"
    target.write_text(OLD)
    completed = _libcst_tool(target, "keras3")
    assert completed.returncode == 0, completed.stderr
    assert "2:7: LSO022 [note] " in completed.stderr, completed.stderr
    # ... in the same two lines as compat-lso-migrate's: the fact, then the help.
    help_line = f"\n  help: {table.RULES_BY_CODE['LSO022'].instruction}\n"
    assert help_line in completed.stderr, completed.stderr


def test_pre_commit_hooks_point_at_the_console_script():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {hook["id"] for hook in hooks} == {"compat-lso-migrate", "compat-lso-check"}
    assert all(hook["entry"].split()[0] == "compat-lso-migrate" for hook in hooks)
    assert "compat-lso-migrate = codemods.cli:main" in (ROOT / "setup.cfg").read_text()
