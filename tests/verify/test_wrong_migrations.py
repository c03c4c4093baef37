"""`verify` on the bundled legacy project (examples/legacy_project/train.py) in a temporary git
repository: the right migration is equal, each wrong one is caught at the step it changes.

The old code is committed as `old`; each migration is a commit of its own on top of it, checked
out in a worktree of its own, where `python -m compat_lso verify --against old` runs as a user
would run it (a subprocess: two TensorFlow processes per verify; all of them in one
module-scoped fixture, two verifies at a time). The old script reads the seed of its batches
from an untracked file in the working directory (data/seed.txt): both runs must see it.

The expected steps are worked out from the script, not from a run: 12 batches, 2**10 initial
scale, growth every 4 steps, batch OVERFLOW_STEP (0-based) overflows float16, so
- the right migration (shim on Keras 3, keras2 on Keras 2) gives the same steps bit for bit;
- --target keras3 (with LSO010's manual fix) differs first at step OVERFLOW_STEP + 1, in
  `iterations` alone (Keras 3 does not count the skipped step), and the audit names that line;
- applying the still-scaled gradients (the unscale removed) changes step 1's update: its digest,
  not its scale;
- dropping the loss scale optimizer leaves the after run without a step 1 at all.

On Keras 2 (tf215) only the right migration runs, to the keras2 target that lives there: the
wrong ones check verify's comparison, which is Python's, on traces tests/trace checks on every
anchor, so they run once, on Keras 3, beside the keras3 target's divergence.
"""

from __future__ import annotations

import concurrent.futures
import pathlib
import re
import subprocess
import sys

import pytest

from tests.shim.backend import IS_KERAS_3
from tests.verify.support import git, run_verify

ROOT = pathlib.Path(__file__).parents[2]
LEGACY = ROOT / "examples" / "legacy_project" / "train.py"
OVERFLOW_STEP = 6  # examples/legacy_project/train.py's, 0-based
STEPS = 9  # a few past the overflow: the runs stop there
RIGHT_TARGET = "shim" if IS_KERAS_3 else "keras2"
APPLY = "optimizer.apply_gradients(zip(gradients, model.trainable_variables))"


def _replace(text, old, new):
    assert old in text, f"{old!r} not in the migrated script"
    return text.replace(old, new)


def _migrated(repo, target):
    subprocess.run(
        [sys.executable, "-m", "codemods", "--target", target, "train.py"],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    text = (repo / "train.py").read_text()
    git(repo, "checkout", "train.py")
    return text


def _scenarios(repo):
    right = _migrated(repo, RIGHT_TARGET)
    if not IS_KERAS_3:
        return {"right": right}
    scenarios = {
        "right": right,
        "unscale removed": _replace(
            right,
            "gradients = optimizer.get_unscaled_gradients(scaled_gradients)",
            "gradients = scaled_gradients",
        ),
        "loss scale optimizer dropped": _replace(
            _replace(
                _replace(
                    right, "scaled_loss = optimizer.get_scaled_loss(loss)", "scaled_loss = loss"
                ),
                "gradients = optimizer.get_unscaled_gradients(scaled_gradients)",
                "gradients = scaled_gradients",
            ),
            "float(optimizer.loss_scale)",
            "1.0",
        ),
    }
    # The constructor line, whatever the target spelled: the inner optimizer alone.
    dropped = scenarios["loss scale optimizer dropped"].splitlines()
    line = next(i for i, text in enumerate(dropped) if "LossScaleOptimizer(" in text)
    dropped[line] = "    optimizer = tf.keras.optimizers.SGD(0.05)"
    scenarios["loss scale optimizer dropped"] = "\n".join(dropped) + "\n"
    scenarios["keras3"] = _replace(
        _migrated(repo, "keras3"),
        "float(optimizer.loss_scale())",
        "float(optimizer.dynamic_scale)",
    )
    return scenarios


def _verify(folder, arguments):
    return run_verify(folder, ["--against", "old", "--steps", str(STEPS), *arguments])


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    repo = tmp_path_factory.mktemp("project")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "test@example.com")
    git(repo, "config", "user.name", "test")
    source = _replace(
        LEGACY.read_text(),
        "train(make_batches())",
        'train(make_batches(int(open("data/seed.txt").read())))',
    )
    (repo / "train.py").write_text(source)
    git(repo, "add", "train.py")
    git(repo, "commit", "-qm", "the old code")
    git(repo, "tag", "old")
    folders = {}
    for name, text in _scenarios(repo).items():
        folder = repo.parent / name.replace(" ", "-")
        git(repo, "worktree", "add", "-q", "-b", name.replace(" ", "-"), str(folder), "old")
        (folder / "train.py").write_text(text)
        git(folder, "commit", "-qam", name)
        (folder / "data").mkdir()
        (folder / "data" / "seed.txt").write_text("3\n")  # untracked, in the working directory
        folders[name] = folder
    # One scenario runs the program as a module: the before run must import the old module.
    arguments = {name: ["train.py"] for name in folders}
    if "loss scale optimizer dropped" in arguments:
        arguments["loss scale optimizer dropped"] = ["-m", "train"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {n: pool.submit(_verify, folders[n], arguments[n]) for n in folders}
        return {name: future.result() for name, future in futures.items()}


WRONG_ONES = pytest.mark.skipif(
    not IS_KERAS_3,
    reason="run on Keras 3 only: verify's comparison is Python's (on Keras 2 the right, keras2 "
    "migration runs)",
)


def _diverged(verdict):
    status, output, document = verdict
    assert status == 1, output
    assert document["verdict"] == "diverged", output
    return document["divergence"], output


def test_the_right_migration_trains_the_same_bit_for_bit(verdicts):
    status, output, document = verdicts["right"]
    assert status == 0, output
    assert f"verify: equal: {STEPS} steps equal (1 loss scale optimizer), bit for bit" in output
    before, after = document["before"]["steps"], document["after"]["steps"]
    assert len(before) == len(after) == STEPS
    # The old run through `run` kept TF 2.4's meaning: the overflow step skipped and counted.
    skipped = before[OVERFLOW_STEP]
    assert (skipped["applied"], skipped["iterations"]) == (False, OVERFLOW_STEP + 1)
    assert skipped["scale_after"] == skipped["scale_before"] / 2
    assert document["before"]["end"] == {"event": "stopped", "reason": "steps", "steps": STEPS}


@WRONG_ONES
def test_removing_the_unscale_is_caught_at_step_1_in_the_update(verdicts):
    divergence, output = _diverged(verdicts["unscale removed"])
    assert (divergence["step"], divergence["optimizer"]) == (1, 0)
    assert [d["field"] for d in divergence["differences"]] == ["digest"]
    assert "diverged at step 1 of loss scale optimizer 0: variable" in output
    # The audit's record at the step's line is step 7's skip, not step 1's (issue 38): matched
    # by step, nothing is recorded at step 1, and the line's record is named as another step's.
    apply_line = LEGACY.read_text().splitlines().index("        " + APPLY) + 1
    assert divergence["audit"] == [] and divergence["audit_by_step"], output
    assert [r["kind"] for r in divergence["audit_other_steps"]] == ["skipped-step"]
    assert f"audit: nothing recorded at step 1 (train.py:{apply_line})" in output
    assert f"at other steps: train.py:{apply_line}: skipped-step (x1)" in output


@WRONG_ONES
def test_dropping_the_loss_scale_optimizer_leaves_no_step_1(verdicts):
    divergence, output = _diverged(verdicts["loss scale optimizer dropped"])
    assert (divergence["step"], divergence["after"]) == (1, None)
    assert "the after run made no such step (it ended with exit status 0)" in output


@WRONG_ONES
def test_keras3_target_differs_at_the_overflow_in_iterations_alone_with_its_reasons(verdicts):
    divergence, output = _diverged(verdicts["keras3"])
    assert divergence["step"] == OVERFLOW_STEP + 1
    assert divergence["differences"] == [
        {"field": "iterations", "before": OVERFLOW_STEP + 1, "after": OVERFLOW_STEP,
         "variable": None}
    ]  # fmt: skip
    apply_line = LEGACY.read_text().splitlines().index("        " + APPLY) + 1
    assert divergence["before_line"] == f"train.py:{apply_line}"
    assert [r["kind"] for r in divergence["audit"]] == ["skipped-step"]
    assert f"audit at train.py:{apply_line}, at step 7: skipped-step (x1 in the run)" in output
    # LSO022's note at the optimizer's line, which the trace names (where the before run made it).
    made = (
        LEGACY.read_text()
        .splitlines()
        .index(
            "    optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05), "
            "loss_scale)"
        )
    )
    assert divergence["optimizer_line"] == f"train.py:{made + 1}"
    assert re.search(
        rf"train\.py:{made + 1}: LSO022 \[note, --target keras3\] .*<- the optimizer's line", output
    ), output
