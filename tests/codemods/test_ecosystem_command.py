"""bench/ecosystem.py, the ecosystem check, on a tiny git repository built here (no network, no
TensorFlow): the manifest is read and checked, a repository missing from the folder is listed,
the files are taken at the pinned commit (not the newest), the counts by code are the ones
`compat-lso-migrate --check --statistics` gives for the same file, the baseline round-trips and
its diff names what moved, and the halves are stable."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench")]

import ecosystem  # noqa: E402
from ecosystem_check import manifest, measure, report, resolve, snapshots  # noqa: E402

from codemods.cli import main as cli_main  # noqa: E402
from codemods.table import TARGETS  # noqa: E402

# Old-API code written for this test: the experimental optimizer, policy and set_policy, and a
# TF 2.4 custom loop; then the same file migrated by hand, which the pinned commit must not see.
OLD = textwrap.dedent(
    """\
    import tensorflow as tf

    policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16")
    tf.keras.mixed_precision.experimental.set_policy(policy)
    opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.1), loss_scale="dynamic"
    )


    def step(model, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
            scaled = opt.get_scaled_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        opt.apply_gradients(zip(grads, model.trainable_variables))
    """
)
NEW = textwrap.dedent(
    """\
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    """
)
PLAIN = "import os\n\nprint(os.sep)\n"


def _git(where: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@x.invalid", *arguments],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def clones(tmp_path_factory) -> tuple[Path, str, dict[str, str]]:
    """A folder with one repository, in the clone layout DIR/owner/name: two commits, the first
    with the old API. Returns the folder, the first commit and its blob ids."""
    folder = tmp_path_factory.mktemp("clones")
    repository = folder / "someone" / "oldcode"
    (repository / "src").mkdir(parents=True)
    _git(repository, "init", "-q")
    (repository / "src" / "train.py").write_text(OLD)
    (repository / "plain.py").write_text(PLAIN)
    _git(repository, "add", ".")
    _git(repository, "commit", "-q", "-m", "old API")
    first = _git(repository, "rev-parse", "HEAD")
    blobs = {p: _git(repository, "rev-parse", f"HEAD:{p}") for p in ("src/train.py", "plain.py")}
    (repository / "src" / "train.py").write_text(NEW)
    _git(repository, "commit", "-q", "-am", "migrated")
    return folder, first, blobs


def _manifest(tmp_path: Path, commit: str, blobs: dict[str, str]) -> Path:
    files = ", ".join(f'{{ path = "{p}", blob = "{b}" }}' for p, b in blobs.items())
    text = textwrap.dedent(
        f"""\
        [[repo]]
        name = "someone/oldcode"
        commit = "{commit}"
        licence = "MIT"
        generation = "both"
        forms = ["experimental-lso", "get_scaled_loss"]
        files = [{files}]

        [[repo]]
        name = "nobody/missing"
        commit = "{"0" * 40}"
        licence = "unknown"
        generation = "tf24"
        forms = []
        files = [{{ path = "a.py", blob = "{"1" * 40}" }}]
        """
    )
    path = tmp_path / "manifest.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def measured(clones, tmp_path_factory) -> list[report.Repository]:
    folder, commit, blobs = clones
    tmp = tmp_path_factory.mktemp("manifest")
    entries = manifest.load(_manifest(tmp, commit, blobs))
    return ecosystem.collect(entries, folder, tmp_path_factory.mktemp("scratch"))


def test_a_repository_missing_from_the_folder_is_listed_not_an_error(measured):
    [missing] = [r for r in measured if not r.snapshot.present]
    assert missing.entry.name == "nobody/missing"
    assert missing.snapshot.problem is not None
    assert missing.snapshot.problem.startswith("not in the folder")
    assert missing.targets == {}
    assert (
        "nobody/missing"
        not in report.baseline([r for r in measured if r.snapshot.present])["entries"]
    )


def test_the_files_are_taken_at_the_pinned_commit_not_the_newest(clones, tmp_path):
    folder, commit, blobs = clones
    entry = manifest.load(_manifest(tmp_path, commit, blobs))[0]
    snapshot = snapshots.take(folder, entry, tmp_path / "copy")
    assert snapshot.files == ["src/train.py", "plain.py"]
    assert (tmp_path / "copy" / "src" / "train.py").read_text() == OLD


def test_a_blob_that_differs_from_the_manifest_is_left_out_and_said(clones, tmp_path):
    folder, commit, blobs = clones
    path = _manifest(tmp_path, commit, {**blobs, "plain.py": blobs["src/train.py"]})
    entry = manifest.load(path)[0]
    snapshot = snapshots.take(folder, entry, tmp_path / "copy")
    assert snapshot.files == ["src/train.py"]
    assert [i.split(":")[0] for i in snapshot.issues] == ["plain.py"]


@pytest.mark.parametrize("target", TARGETS)
def test_the_counts_by_code_are_what_check_statistics_gives(
    measured, clones, tmp_path, capsys, target
):
    # The independent reference: the CLI's own `--check --statistics --format json` on the same
    # file at the same commit.
    (tmp_path / "train.py").write_text(OLD)
    cli_main(["--check", "--statistics", "--format", "json", "--target", target, str(tmp_path)])
    *rows, share = json.loads(capsys.readouterr().out)
    expected = {
        r["code"]: {"fixed": r["fixed"], "manual": r["manual"], "notes": r["note"]} for r in rows
    }
    [present] = [r for r in measured if r.snapshot.present]
    counts = report.counts(present.targets[target])
    assert counts["by_code"] == expected
    assert {"LSO001", "LSO004"} <= set(expected)  # the experimental optimizer and set_policy
    assert (counts["fixed"], counts["manual"]) == (share["fixed"], share["manual"])
    summary = report.summary([present], target)
    by_reason = share.pop("by_reason")
    assert summary["share"] == share
    assert summary["manual_by_reason"] == by_reason
    assert sum(by_reason.values()) == share["manual"]
    assert counts["files"] == 2 and counts["migrated"] == 1  # plain.py: the prefilter skips it
    assert sum(counts[name] for name in report.DEFECTS) == 0


def test_the_baseline_round_trips_and_its_diff_names_what_moved(measured, tmp_path):
    present = [r for r in measured if r.snapshot.present]
    path = tmp_path / "baseline.json"
    report.write_baseline(present, path)
    old = report.read_baseline(path)
    assert old is not None
    assert old == json.loads(json.dumps(report.baseline(present)))
    assert report.diff(old, report.baseline(present)) == []
    key = "someone/oldcode@" + present[0].entry.commit[:10]
    lso001 = old["entries"][key]["keras3"]["by_code"]["LSO001"]
    moved = json.loads(json.dumps(old))
    moved["entries"][key]["keras3"]["by_code"]["LSO001"]["fixed"] += 2
    moved["entries"][key]["keras3"]["crashes"] = 1
    moved["entries"]["other/repo@0123456789"] = {}
    assert report.diff(old, moved) == [
        "+ other/repo@0123456789: not in the baseline",
        f"{key} [keras3] crashes: 0 -> 1 (+1)",
        f"{key} [keras3] LSO001 fixed: {lso001['fixed']} -> {lso001['fixed'] + 2} (+2)",
        f"total [keras3] LSO001 fixed: {lso001['fixed']} -> {lso001['fixed'] + 2} (+2)",
    ]


def test_the_halves_are_stable_and_copies_follow_what_they_copy():
    # Fixed by the manifest's definition (the low bit of sha256 of the name): moving a name to
    # the other half would mean rules were tuned on what the check half claims.
    names = ("google/automl", "mozilla/DeepSpeech", "tensorflow/models", "danijar/dreamerv2")
    assert [manifest.half_of(n) for n in names] == ["check", "check", "tuning", "tuning"]
    entry = manifest.Entry("a/b", "0" * 40, (("x.py", "1" * 40),), "MIT", (), "tf24")
    copy = manifest.Entry(
        "someone/fork", "0" * 40, (("x.py", "1" * 40),), "MIT", (), "tf24", copies="a/b"
    )
    assert manifest.half_of("someone/fork") != manifest.half_of(
        "a/b"
    )  # so that the next line can fail
    assert copy.half == entry.half == manifest.half_of("a/b")
    assert manifest.seen_repositories([copy]) == set()
    seen = manifest.Entry("a/b", "0" * 40, (("x.py", "1" * 40),), "MIT", (), "tf24", seen=True)
    assert manifest.seen_repositories([seen, copy]) == {"a/b", "someone/fork"}


def test_the_real_manifest_holds_a_hundred_repositories_in_both_halves():
    entries = manifest.load()
    chosen = manifest.selections(entries)
    assert len({e.name for e in entries}) >= 100
    assert all(len({e.name for e in chosen[label]}) >= 30 for label in chosen)
    assert {e.name for e in entries if e.seen} >= {"google/automl", "OpenNMT/OpenNMT-tf"}


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("commit", '"abc"', "commit must be 40 lowercase hex digits"),
        ("generation", '"tf3"', "generation must be one of"),
        ("files", "[]", "files is empty"),
    ],
)
def test_a_bad_manifest_entry_is_named_with_its_field(tmp_path, field, value, said):
    lines = {
        "name": '"o/n"',
        "commit": f'"{"a" * 40}"',
        "licence": '"MIT"',
        "generation": '"tf24"',
        "forms": "[]",
        "files": f'[{{ path = "x.py", blob = "{"b" * 40}" }}]',
    }
    lines[field] = value
    path = tmp_path / "m.toml"
    path.write_text("[[repo]]\n" + "".join(f"{k} = {v}\n" for k, v in lines.items()))
    with pytest.raises(manifest.ManifestError, match=f"'o/n'.*{said}"):
        manifest.load(path)


def test_the_names_an_output_spells_are_found_from_its_imports():
    text = textwrap.dedent(
        """\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import (
            experimental as mp,
        )

        opt = mp.LossScaleOptimizer(opt, "dynamic")
        tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
        tf.keras.layers.Dense(1)


        def f(tf):
            return tf.keras.mixed_precision.experimental
        """
    )
    found = [(r.line, r.first, r.last, r.name) for r in resolve.references(text)]
    assert found == [
        (2, 2, 4, "tensorflow.keras.mixed_precision.experimental"),
        (6, 6, 6, "tensorflow.keras.mixed_precision.experimental.LossScaleOptimizer"),
        (7, 7, 7, "tensorflow.train.experimental.enable_mixed_precision_graph_rewrite"),
    ]  # Dense names nothing of loss scaling; `tf` in f() is a parameter, not the import


def test_a_name_resolves_attribute_by_attribute_or_as_a_module():
    assert resolve._lookup("json.decoder.JSONDecoder")
    assert resolve._lookup("email.mime.text")  # a submodule not imported by its package
    assert not resolve._lookup("json.decoder.NoSuchThing")
    assert resolve._lookup("no_such_root_package.anything")  # not installed: not judged here


def test_a_file_that_is_not_valid_python_is_an_input_problem_not_a_crash(tmp_path):
    # Python 2 with the old API: the codemod reports it and leaves it; that is the input's fault.
    (tmp_path / "old.py").write_text(
        'import tensorflow as tf\nprint "scale", tf.train.experimental.DynamicLossScale()\n'
    )
    done = measure.measure(tmp_path, ["old.py"], "keras2", None)
    assert done.crashes == [] and len(done.unparsable) == 1
    assert done.unparsable[0].startswith("old.py: ")
    assert (tmp_path / "old.py").read_text().startswith("import tensorflow")  # the copy was used
