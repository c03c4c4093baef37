"""`verify` on the GAN project (issue 38's "Done when"), as a user runs it: the old project
committed, `compat-lso-migrate --target shim .` once over the working tree, `python -m compat_lso
verify train.py`. The project (tests/old_code/scripts/projects/gan/: a model module and a driver,
one optimizer shared by two models, `Adam(lr=...)`, one overflowing step) and its TF 2.15
numbers are tests/old_code/test_gan_project.py's.

- before: the old code through `run` gives TF 2.15's loss scales and `iterations`, step for step
  (the trace's values are the recorded twin's: one optimizer, 2**15 halved at the overflow);
- --target shim: equal, bit for bit, every step verify takes (20).
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.shim.backend import IS_KERAS_3
from tests.verify.support import git, run_verify

PROJECT = pathlib.Path(__file__).parents[1] / "old_code" / "scripts" / "projects" / "gan"
REFERENCE = pathlib.Path(__file__).parents[1] / "old_code" / "references" / "projects.tf215.json"

pytestmark = pytest.mark.skipif(
    not IS_KERAS_3,
    reason="on Keras 2 backends TF 2.15's own Adam refuses the second model (KeyError), as it "
    "did natively: the old project runs on Keras 3's `run` (tests/old_code/test_gan_project.py)",
)


@pytest.fixture(scope="module")
def verdict(tmp_path_factory):
    repo = tmp_path_factory.mktemp("gan")
    for path in PROJECT.glob("*.py"):
        shutil.copy(path, repo)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "test@example.com")
    git(repo, "config", "user.name", "test")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the GAN project, as written for TF 2.7")
    migrate = subprocess.run(
        [sys.executable, "-m", "codemods", "--target", "shim", "."],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert migrate.returncode == 1, migrate.stdout + migrate.stderr  # 1: files changed
    assert "0 finding(s) need manual work" in migrate.stdout + migrate.stderr
    return run_verify(repo, ["train.py"])


def test_the_old_project_through_run_steps_as_tf215_did(verdict):
    _, output, document = verdict
    assert document is not None, output
    steps = document["before"]["steps"]
    assert {step["optimizer"] for step in steps} == {0}  # one optimizer, shared
    assert len(steps) == 20
    twin = json.loads(REFERENCE.read_text())["results"][
        "old_code/scripts/projects/gan_tf24/train.py"
    ]
    # The 20 steps: 4 generator, 8 discriminator and 4 generator steps, then 4 of the second
    # discriminator fit, whose third overflows; TF 2.15's count after each of the first fits.
    assert [steps[n - 1]["iterations"] for n in (4, 12, 16)] == twin["iterations"][:3]
    skipped = [s["step"] for s in steps if not s["applied"]]
    assert skipped == [19]
    assert steps[18]["scale_before"] == 2.0**15
    assert steps[18]["scale_after"] == 2.0**14


def test_migrated_to_the_shim_in_one_pass_is_equal_bit_for_bit(verdict):
    status, output, document = verdict
    assert (status, document["verdict"]) == (0, "equal"), output
    assert "verify: equal: 20 steps equal" in output
    assert "bit for bit" in output
