"""The codemod over real files: tests/codemods/corpus/, whose PROVENANCE names each file's
repository, commit, path and licence. For every target: nothing crashes, no file is left
unparsable, a second run changes nothing, findings point into the files, and the patterns the
real files show are handled as their named cases below say."""

import ast
import bisect
import json
import re
import shutil
import statistics
from pathlib import Path

import pytest

from codemods import guarantee
from codemods.apply.engine import migrate
from codemods.cli import run
from codemods.io import formats
from codemods.io.files import Outcome, decode, discover
from codemods.io.notebooks import mask_ipython
from codemods.table import TARGETS, Target

CORPUS = Path(__file__).parent / "corpus"
DOCS = Path(__file__).parents[2] / "docs" / "codemod.md"
LICENCES = {"Apache-2.0", "MIT", "BSD-3-Clause"}


def _provenance() -> list[list[str]]:
    text = (CORPUS / "PROVENANCE").read_text(encoding="utf-8")
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


def test_provenance_names_every_file_with_its_repository_commit_and_licence():
    rows = _provenance()
    files = {
        p.relative_to(CORPUS).as_posix()
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name != "PROVENANCE"
    }
    assert {row[0] for row in rows} == files
    for local, repository, commit, path, licence in rows:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", repository), local
        assert re.fullmatch(r"[0-9a-f]{40}", commit), local
        assert local.endswith(path) and local.startswith(f"{repository.replace('/', '__')}@"), local
        assert licence in LICENCES, local
    assert len({row[1] for row in rows}) >= 5, "several repositories"
    assert sum((CORPUS / row[0]).stat().st_size for row in rows) < 1_000_000, "small enough for CI"


def _python(path: Path, text: str) -> list[str]:
    """The Python source in a file: itself, or a notebook's code cells with IPython masked."""
    if path.suffix != ".ipynb":
        return [text]
    cells = json.loads(text)["cells"]
    return [mask_ipython("".join(c["source"])) for c in cells if c["cell_type"] == "code"]


@pytest.fixture(scope="module", params=TARGETS)
def migrated(request, tmp_path_factory) -> tuple[Target, Path, dict[str, Outcome]]:
    target: Target = request.param
    root = tmp_path_factory.mktemp(f"corpus-{target}")
    shutil.copytree(CORPUS, root, dirs_exist_ok=True)
    paths = [str(p) for p in discover([str(root)])]
    outcomes = run(paths, target, enabled=None, write=True, jobs=1)
    by_file = {Path(o.path).relative_to(root).as_posix(): o for o in outcomes}
    return target, root, by_file


def test_findings_are_two_short_lines(migrated):
    # As ruff and rustc print them (issue 23): `path:line:col: CODE fact` and, where there is one,
    # `  help: fix`. The text after each line's fixed start is about 100 characters at the median
    # and never over 160, over every finding on real files; the reasoning is --explain's.
    _, _, outcomes = migrated
    facts: list[int] = []
    helps: list[int] = []
    for outcome in outcomes.values():
        for finding in outcome.result.findings if outcome.result else ():
            first, *rest = formats.text("p", finding).split("\n")
            start = f"p:{finding.line}:{finding.col}: "
            assert first.startswith(start + finding.code)
            facts.append(len(first) - len(start))
            assert len(rest) == bool(finding.help), "one help line, where there is a fix to give"
            helps += [len(line.removeprefix("  help: ")) for line in rest]
    # On shim, few findings are left with a help line (17 at 95.6% fixed): enough for a median.
    assert len(facts) > 50 and len(helps) > 10, "enough findings to measure"
    assert statistics.median(facts) <= 110 and max(facts) <= 160, (
        statistics.median(facts),
        max(facts),
    )
    assert statistics.median(helps) <= 110 and max(helps) <= 160, (
        statistics.median(helps),
        max(helps),
    )


def test_the_share_fixed_in_the_docs_is_the_corpus_own(migrated):
    # docs/codemod.md's table of fixed / (fixed + manual) per target on this corpus, as
    # `compat-lso-migrate --check --statistics` prints it (notes not counted), and its console
    # block's last line for keras3.
    target, _, outcomes = migrated
    rows = formats.statistics(
        f for o in outcomes.values() if o.result and not o.error for f in o.result.findings
    )
    share = formats.share_fixed(rows, target)
    page = DOCS.read_text(encoding="utf-8").split("On the test corpus", 1)[1]
    row = f"| {target} | {share['fixed']} | {share['manual']} | "
    [line] = [line for line in page.splitlines() if line.startswith(f"| {target} |")]
    text = formats.share_fixed_text(share)
    assert line == row + text.split(": ", 1)[1].split(" ", 1)[0] + " |", (line, text)
    if target == "keras3":
        assert f"\n{text}\n```" in page, text


def test_no_file_is_an_error(migrated):
    _, _, outcomes = migrated
    assert {name: o.error for name, o in outcomes.items() if o.error} == {}


def test_every_file_parses_after_the_migration(migrated):
    _, root, outcomes = migrated
    for name in outcomes:
        path = root / name
        for source in _python(path, _read(path)):
            ast.parse(source)


def test_a_second_run_changes_nothing(migrated):
    target, root, _ = migrated
    paths = [str(p) for p in discover([str(root)])]
    again = run(paths, target, enabled=None, write=False, jobs=1)
    assert [o.path for o in again if o.changed or o.error] == []


def test_findings_point_into_the_files_as_written(migrated):
    _, root, outcomes = migrated
    for name, outcome in outcomes.items():
        if outcome.result is None or name.endswith(".ipynb"):
            continue
        lines = _read(root / name).splitlines()
        for finding in outcome.result.findings:
            assert 1 <= finding.line <= len(lines), (name, finding)
            assert 1 <= finding.col <= len(lines[finding.line - 1]) + 1, (name, finding)


def _read(path: Path) -> str:
    return decode(path.read_bytes())[0]  # as the codemod reads it (cookie, BOM)


def _text(root: Path, name: str) -> str:
    return _read(root / name)


def _manual(outcomes: dict[str, Outcome], name: str) -> list[tuple[int, str]]:
    result = outcomes[name].result
    assert result is not None
    return [(f.line, f.code) for f in result.findings if not f.fixed]


# -- named cases: patterns of issue 11 as the real files show them ---------------------------------
NVIDIA = "NVIDIA__DeepLearningExamples@ddbcd54056/TensorFlow2"
EFFICIENTNET = f"{NVIDIA}/Classification/ConvNets/efficientnet/utils/setup.py"
ELECTRA = f"{NVIDIA}/LanguageModeling/ELECTRA/run_pretraining.py"
OPENNMT_DETECTION = "OpenNMT__OpenNMT-tf@cea9d9e366/opennmt/training.py"
HOROVOD_GATE = "horovod__horovod@27deeb996c/horovod/tensorflow/__init__.py"
GUIDE_TF23 = "tensorflow__docs@945a448704/site/en/guide/mixed_precision.ipynb"


def test_a_dynamic_policy_no_longer_blocks_the_file(migrated):
    # Policy('mixed_float16', loss_scale='dynamic') used to keep the alias and withdraw the
    # set_policy rewrite beside it.
    _, root, outcomes = migrated
    assert _manual(outcomes, EFFICIENTNET) == []
    text = _text(root, EFFICIENTNET)
    assert "tf.keras.mixed_precision.Policy('mixed_float16')" in text
    assert "tf.keras.mixed_precision.set_global_policy(policy)" in text
    assert "mixed_precision.experimental" not in text


def test_electra_policy_and_optimizer_are_migrated_together(migrated):
    target, root, outcomes = migrated
    text = _text(root, ELECTRA)
    assert "mixed_precision.experimental" not in text
    assert 'Policy("mixed_float16")' in text
    new = (
        "compat_lso.LossScaleOptimizer"
        if target == "shim"
        else "mixed_precision.LossScaleOptimizer"
    )
    assert f"{new}(optimizer)" in text
    if target == "keras3":  # its accumulator is a parameter: explicit, every apply scaled back
        assert _manual(outcomes, ELECTRA) == []
        assert "scale_loss(1.0), grad.dtype), grad) for grad in clipped_accumulated" in text


def test_the_private_package_under_a_dead_version_gate_is_a_note(migrated):
    # `if tf.__version__.startswith('2.2.'):` then an import from the private package: no
    # supported TensorFlow runs that branch (test_codemod_lso104_old_version_branch.py).
    _, _, outcomes = migrated
    result = outcomes[HOROVOD_GATE].result
    assert result is not None
    assert _manual(outcomes, HOROVOD_GATE) == []
    assert [(f.line, f.code) for f in result.findings if f.note] == [(51, "LSO104"), (52, "LSO014")]


def test_the_tf23_guide_notebook_keeps_its_shell_lines_and_says_what_blocks_it(migrated):
    # One cell shows Policy('mixed_float16', loss_scale=1024): on keras2/keras3 that keeps the
    # `mixed_precision` alias (reported), and the other uses are written through the notebook's
    # own `from tensorflow import keras` instead; on shim it moves to
    # compat_lso.experimental.Policy and the rest is migrated.
    target, root, outcomes = migrated
    cells = json.loads(_text(root, GUIDE_TF23))["cells"]
    sources = ["".join(c["source"]) for c in cells]
    assert "!nvidia-smi -L" in sources
    code = "\n".join(s for c, s in zip(cells, sources, strict=True) if c["cell_type"] == "code")
    manual = _manual(outcomes, GUIDE_TF23)
    if target == "shim":
        assert "mixed_precision.set_global_policy(policy)" in code
        assert "compat_lso.experimental.Policy('mixed_float16', loss_scale=1024)" in code
        # Cell 46 reads `policy.loss_scale` of the renamed Policy, which the new one lacks (the
        # sweep's LSO100); cell 49's Policy with a loss scale needs compat_lso.install(), which
        # the shim target adds (LSO006, LSO023), once.
        assert [c for _, c in manual if c != "LSO018"] == ["LSO100"]
        messages = [
            f.message
            for f in outcomes[GUIDE_TF23].result.findings
            if not f.fixed and f.code != "LSO018"
        ]
        assert "[cell 46]" in messages[0] and "does not exist on the new Policy" in messages[0]
        assert code.count("compat_lso.install()") == 1
    else:
        assert "keras.mixed_precision.set_global_policy(policy)" in code
        assert "keras.mixed_precision.LossScaleOptimizer(optimizer)" in code
        assert "import experimental as mixed_precision" in code  # kept for cell 49
        messages = [f.message for f in outcomes[GUIDE_TF23].result.findings if not f.fixed]
        assert any("[cell 49]" in m and "loss_scale=1024" in m for m in messages)
        assert not any("another use left to you" in m for m in messages)
        # The Policy now is the new one, which has no loss_scale: cell 46's read is reported.
        assert [c for _, c in _manual(outcomes, GUIDE_TF23) if c != "LSO018"] == [
            "LSO101",
            "LSO100",
            "LSO006",
        ]


GUIDE_TF24 = "tensorflow__docs@a7be335a85/site/en/guide/mixed_precision.ipynb"


@pytest.mark.parametrize("guide", [GUIDE_TF23, GUIDE_TF24])
def test_the_guides_dtype_names_are_rewritten_where_keras3_runs_them(migrated, guide):
    # `print('Outputs dtype: %s' % outputs.dtype.name)` fails on Keras 3 (a string dtype): the
    # guide's code most people copied must not be left to fail under `run` or after a migration.
    target, root, outcomes = migrated
    result = outcomes[guide].result
    assert result is not None
    found = [f for f in result.findings if f.code == "LSO018"]
    text = _text(root, guide)
    if target == "keras2":
        assert found == []
        assert "outputs.dtype.name" in text
        return
    assert [f.fixed for f in found] == [True] * 4, found
    assert ".dtype.name" not in text
    assert text.count('getattr(outputs.dtype, \\"name\\", outputs.dtype)') == 2
    assert 'getattr(dense1.kernel.dtype, \\"name\\", dense1.kernel.dtype)' in text


def test_the_class_stored_in_a_variable_in_a_feature_detection_branch_is_not_silent(migrated):
    # `wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer` on line 23 of the
    # original, in the else branch of `if compat.tf_supports(...)`. Found by its text in the file
    # as written (an inserted `import compat_lso` moves it down), where a finding must point.
    _, root, outcomes = migrated
    lines = _text(root, OPENNMT_DETECTION).splitlines()
    left = [
        number
        for number, line in enumerate(lines, start=1)
        if "wrapper_class = tf.keras.mixed_precision.experimental." in line
    ]
    reported = {n for n, _ in _manual(outcomes, OPENNMT_DETECTION)}
    assert set(left) <= reported


def _unreported(source: str, target: Target) -> list[tuple[int, str]]:
    """What the target lacks in the migration of `source` that the user is not told about."""
    result = migrate(source, target)
    left = [(f.line, f.code) for f in guarantee.unreported(source, target, result)]
    # guarantee.unreported trusts the spans the rules and the sweep marked as reported: each must
    # also be a finding the user sees (manual work, or a note), on one of the span's lines.
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    manual_lines = {f.line for f in result.findings if not f.fixed or f.note}
    for start, end in result.reported:
        first, last = bisect.bisect_right(starts, start), bisect.bisect_right(starts, end - 1)
        if not manual_lines.intersection(range(first, last + 1)):
            left.append((first, "marked reported, but no finding"))
    return left


@pytest.mark.parametrize("target", TARGETS)
def test_the_sweep_leaves_nothing_unreported_in_any_real_file(target):
    # issue 11's guarantee on real code: whatever the target lacks in a migrated file has a
    # finding at its line.
    left = {}
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in {".py", ".ipynb"}:
            continue
        for index, source in enumerate(_python(path, _read(path))):
            unreported = _unreported(source, target)
            if unreported:
                left[f"{path.relative_to(CORPUS)}#{index}"] = unreported
    assert left == {}
