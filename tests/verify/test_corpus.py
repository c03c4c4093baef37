"""`verify` on a representative subset of the pattern corpus, as users run it: migrate the
working tree with the codemod, then `python -m compat_lso verify SCRIPT` (against HEAD).

The subset, for the suite's time budget (each verify is two TensorFlow processes; all of them
run in one module-scoped fixture, two at a time): a custom loop with a skipped step
(guide_custom_loop), a GAN with two loss scale optimizers (gan_two_tapes), MirroredStrategy with
Model.fit (mirrored_fit) and a loop that never scales its loss through the optimizer
(wrap_only_horovod_tape). tests/old_code/test_patterns.py runs every script of the corpus in
every mode; here the command's verdicts are checked against the corpus's recorded numbers
(references/patterns.tf215.json, TF 2.15's own classes):

- before: the old script through `run` gives the recorded loss scales and `iterations`, step for
  step (the trace's values are those numbers);
- --target shim: equal, bit for bit (the corpus's shim numbers are TF 2.15's);
- --target keras3: where the recorded scales show a skipped step (the scale after a step below
  the one before it), Keras 3's class does not count it: the verdict is "diverged" at the first
  such step, in `iterations` alone; with no skipped step recorded, "equal".
"""

from __future__ import annotations

import concurrent.futures
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.old_code import record
from tests.shim.backend import IS_KERAS_3
from tests.verify.support import git, run_verify

TESTS = pathlib.Path(__file__).parents[1]
PATTERNS = TESTS / "old_code" / "scripts" / "patterns"
REFERENCE = record.load(TESTS / "old_code" / "references" / "patterns.tf215.json")
# (script, target); keras3 runs on Keras 3 only.
# The shim's bit-for-bit verdict on a plain custom loop is test_wrong_migrations.py's right
# migration; here the shim runs the two-optimizer and the distributed script.
CASES = [
    ("guide_custom_loop", "keras3"),
    ("gan_two_tapes", "shim"),
    ("mirrored_fit", "shim"),
    ("wrap_only_horovod_tape", "keras3"),
]
RUN = [case for case in CASES if IS_KERAS_3 or case[1] != "keras3"]


def _recorded(script):
    """Per optimizer: the recorded (scales, iterations) lists, one entry per step."""
    numbers = REFERENCE[(PATTERNS / f"{script}.py").relative_to(TESTS).as_posix()]
    scales, counts = numbers["scales"], numbers["iterations"]
    if isinstance(scales[0], list):
        return [
            ([step[k] for step in scales], [step[k] for step in counts])
            for k in range(len(scales[0]))
        ]
    return [(scales, counts)]


def _first_skipped_step(script):
    """(step, optimizer) of the first step the recorded scales show skipped, or None; in the
    order the scripts step their optimizers (optimizer 0 first in each iteration)."""
    found = []
    for optimizer, (scales, _) in enumerate(_recorded(script)):
        for step in range(1, len(scales)):
            if scales[step] < scales[step - 1]:
                found.append((step + 1, optimizer))
                break
    return min(found, default=None)


def _verify(folder, script, target):
    migrate = subprocess.run(
        [sys.executable, "-m", "codemods", "--target", target, f"{script}.py"],
        cwd=folder, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert migrate.returncode == 1, migrate.stdout + migrate.stderr  # 1: the file changed
    return run_verify(folder, [f"{script}.py"])


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    repo = tmp_path_factory.mktemp("corpus")
    for name in ["common", "hvd", *sorted({script for script, _ in RUN})]:
        shutil.copy(PATTERNS / f"{name}.py", repo)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "test@example.com")
    git(repo, "config", "user.name", "test")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the corpus, unmigrated")
    folders = {}
    for script, target in RUN:
        folder = repo.parent / f"{script}-{target}"
        git(repo, "worktree", "add", "-q", "--detach", str(folder), "HEAD")
        folders[script, target] = folder
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {case: pool.submit(_verify, folders[case], *case) for case in RUN}
        return {case: future.result() for case, future in futures.items()}


def _by_optimizer(steps):
    columns: dict[int, list[dict]] = {}
    for step in steps:
        columns.setdefault(step["optimizer"], []).append(step)
    return [columns[k] for k in sorted(columns)]


@pytest.mark.parametrize("case", RUN, ids=[f"{s}-{t}" for s, t in RUN])
def test_the_old_run_gives_the_recorded_numbers(verdicts, case):
    _, output, document = verdicts[case]
    assert document is not None, output
    traced = _by_optimizer(document["before"]["steps"])
    recorded = _recorded(case[0])
    assert [([s["scale_after"] for s in steps], [s["iterations"] for s in steps])
            for steps in traced] == recorded, output  # fmt: skip


@pytest.mark.parametrize("case", RUN, ids=[f"{s}-{t}" for s, t in RUN])
def test_the_verdict_agrees_with_the_recorded_numbers(verdicts, case):
    script, target = case
    status, output, document = verdicts[case]
    skipped = _first_skipped_step(script) if target == "keras3" else None
    if skipped is None:
        assert (status, document["verdict"]) == (0, "equal"), output
        assert "bit for bit" in output
        return
    assert (status, document["verdict"]) == (1, "diverged"), output
    divergence = document["divergence"]
    assert (divergence["step"], divergence["optimizer"]) == skipped, output
    assert [d["field"] for d in divergence["differences"]] == ["iterations"], output
    assert [r["kind"] for r in divergence["audit"]] == ["skipped-step"], output
    assert "LSO022 [note, --target keras3]" in output


def test_the_subset_has_what_it_says():
    assert len(RUN) >= 4 if IS_KERAS_3 else len(RUN) >= 2
    assert any(_first_skipped_step(s) for s, t in RUN if t == "keras3") or not IS_KERAS_3
    assert len(_recorded("gan_two_tapes")) == 2
