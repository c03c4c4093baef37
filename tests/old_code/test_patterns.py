"""A corpus of training patterns from public repositories keeps TF 2.15's numbers on Keras 3.

scripts/patterns/ holds small scripts, each reproducing how a named repository trains (its
docstring names the repository, commit and path): wrap-only loops (gradients of the unscaled
loss applied through a loss scale optimizer), Keras 2's manual pattern, Horovod's tape and
`broadcast_variables(opt.variables())` (hvd.py, a one-process stand-in), clipping, all-reduce and
accumulation between unscale and apply, GANs with two optimizers, `train_step` overrides,
`model.optimizer`, `minimize`, OpenNMT-tf's `get_gradients` in a tf.function, MirroredStrategy
on one CPU device, fixed and dynamic scales, and
code with no loss-scale name at all: `set_global_policy('mixed_float16')` (or TF 2.1-2.3's
`set_policy`, or a Policy's loss scale) with compile() and fit() or train_on_batch, a schedule or
callback keyed on `iterations`, on targets that overflow float16 at the initial scale.
scripts/patterns/tf21/ holds TF 2.1-2.8 experimental-API versions of some of them; TF 2.15 has
no experimental API, so each names its TF 2.4-2.15 twin (`TF215_TWIN`), whose numbers it must
give.

The reference, references/patterns.tf215.json, is what the TF 2.4-2.15 scripts reported running
natively on TF 2.15 (Keras 2's own classes, no compat_lso); the file names the command that made
it. On Keras 3 every script must give those numbers bit for bit through `python -m compat_lso
run` (with `--audit`, whose records the audit test reads) and after `compat-lso-migrate
--target shim`; after `--target keras3` (no shim) it must give them, or Keras 3's documented
rule for skipped steps, or fail or differ only where the codemod reported manual work (see the
keras3 test). Each mode runs all scripts in one process
(harness.run_scripts, batch.py), the two migrations together: three TensorFlow starts in all
(`run --audit`, the migrations, `run --keep-native`), started together.
"""

from __future__ import annotations

import concurrent.futures
import functools
import itertools
import json
import pathlib
import re
import tempfile
from typing import Any

import pytest
from packaging.version import Version

from codemods.apply.engine import migrate
from compat_lso import _backend
from tests.old_code import harness, record
from tests.shim.backend import IS_KERAS_3

TESTS = pathlib.Path(__file__).parents[1]
PATTERNS = pathlib.Path(__file__).parent / "scripts" / "patterns"
REFERENCE_FILE = pathlib.Path(__file__).parent / "references" / "patterns.tf215.json"
REFERENCE = record.load(REFERENCE_FILE)
SCRIPTS = record.scripts_in([str(PATTERNS)]) + record.scripts_in([str(PATTERNS / "tf21")])
_TWIN = re.compile(r'^TF215_TWIN = "([\w.]+)"', re.MULTILINE)
_SOURCE = re.compile(r"Pattern: [\w.-]+/[\w.-]+@[0-9a-f]{40},\s+[\w./-]+\.(py|ipynb)")
# Where training happens: a numeric difference after --target keras3 must be reported here.
# compile() is where Keras wraps the optimizer under mixed_float16 (LSO022's note there).
_TRAINING_CALL = re.compile(r"\.(apply_gradients|minimize|fit|compile)\(")

# (script id, mode) -> why it fails today, as measured on TF 2.21. Strict: an XPASS says the
# work landed and the entry goes. (After --target shim, compile() under mixed_float16 gets
# compat_lso's class where the code relies on TF 2.4's (LSO023): no entry left.)
KNOWN_FAILURES: dict[tuple[str, str], str] = {
    ("legacy_adam_custom_loop", "migrate-keras3"): (
        "Keras 3's class leaves skipped steps out of `iterations`, so the schedule and Adam's "
        "bias correction shift; LSO022's note says so at the LossScaleOptimizer's line, not at "
        "the apply_gradients (issue 32, item 1)"
    ),
}
# Scripts whose inner optimizer Keras 3 computes with other rounding than TF 2.15's fused kernels
# (a legacy Adam, built as Keras 3's Adam: the runtime's warning and LSO024's note say so):
# counts and scales equal, losses and weights within this relative tolerance, never bit for bit.
LAST_BITS: dict[str, float] = {"legacy_adam_custom_loop": 2.0**-18}
# Whose migrated keras3 numbers differ from TF 2.15's by construction, at the line of the note
# that says so: LSO020 scales a loss that was never scaled, and its first scaled gradients
# overflow float16, so Keras 3 skips steps while the scale settles.
SCALED_OVERFLOW = "wrap_only_scaled_overflow"


def _key(script: pathlib.Path) -> str:
    return script.resolve().relative_to(TESTS.resolve()).as_posix()


def _id(script: pathlib.Path) -> str:
    return script.relative_to(PATTERNS).with_suffix("").as_posix()


def _reference(script: pathlib.Path) -> dict[str, Any]:
    twin = _TWIN.search(script.read_text(encoding="utf-8"))
    if twin:
        return REFERENCE[_key(PATTERNS / twin.group(1))]
    return REFERENCE[_key(script)]


# The two migrations run their copies as `python SCRIPT`: one process for both.
PLAIN_MODES = ("migrate-shim", "migrate-keras3")


@functools.cache
def _batches() -> dict[str, Any]:
    """The three processes, started together: the module runs whole on one pytest-xdist worker,
    whose waits would otherwise leave the other core idle while one batch runs after another."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        started: dict[str, concurrent.futures.Future[Any]] = {
            "run --audit": pool.submit(_run_with_the_audit_once),
            "plain": pool.submit(
                harness.run_plain_modes,
                dict.fromkeys(PLAIN_MODES, SCRIPTS),
                pythonpath=[PATTERNS],
            ),
            # patterns/ on PYTHONPATH: tf21/ scripts import its common.py and hvd.py (helpers
            # with no loss-scaling code, which a migration leaves as they are).
            "run-keep-native": pool.submit(
                harness.run_scripts, SCRIPTS, "run-keep-native", pythonpath=[PATTERNS]
            ),
        }
        return {name: future.result() for name, future in started.items()}


def _outcomes(mode: str) -> dict[pathlib.Path, dict[str, Any] | harness.ScriptFailed]:
    if mode == "run":  # one batch serves `run` and its audit (_run_with_the_audit)
        return _run_with_the_audit()[0]
    if mode in PLAIN_MODES:
        return _batches()["plain"][mode]
    assert mode == "run-keep-native", mode
    return _batches()["run-keep-native"]


def _cases(mode: str) -> list[Any]:
    return [
        pytest.param(
            script,
            id=_id(script),
            marks=(
                [pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[_id(script), mode])]
                if (_id(script), mode) in KNOWN_FAILURES
                else []
            ),
        )
        for script in SCRIPTS
    ]


def test_the_corpus_names_its_sources_and_was_recorded_natively_on_tf215():
    reference = json.loads(REFERENCE_FILE.read_text())
    assert reference["command"].startswith('nox -s "record(tf215)" -- ')
    assert reference["mode"] == "native"
    assert reference["versions"]["tensorflow"] == "2.15.1"
    assert reference["versions"]["keras"].startswith("2.15")
    assert set(REFERENCE) == {_key(s) for s in SCRIPTS if not _TWIN.search(s.read_text())}
    assert len(SCRIPTS) >= 30
    for script in SCRIPTS:
        assert _SOURCE.search(script.read_text()), f"{_id(script)} names no repository@commit, path"
        _reference(script)  # a twin that was recorded


def _outcome(script: pathlib.Path, mode: str) -> dict[str, Any]:
    outcome = _outcomes(mode)[script.resolve()]
    if isinstance(outcome, harness.ScriptFailed):
        raise outcome
    return outcome


@pytest.mark.skipif(not IS_KERAS_3, reason="Keras 3 is the generation whose class changed meaning")
@pytest.mark.parametrize("script", _cases("run"))
def test_run_gives_tf215_numbers(script):
    _assert_tf215_numbers(script, _outcome(script, "run"))


@pytest.mark.skipif(not IS_KERAS_3, reason="Keras 3 is the generation whose class changed meaning")
@pytest.mark.parametrize("script", _cases("migrate-shim"))
def test_migrated_to_the_shim_gives_tf215_numbers(script):
    _assert_tf215_numbers(script, _outcome(script, "migrate-shim"))


def _assert_tf215_numbers(script: pathlib.Path, outcome: dict[str, Any]) -> None:
    reference = _reference(script)
    tolerance = LAST_BITS.get(_id(script))
    if tolerance is None:
        assert outcome == reference
        return
    assert outcome != reference, f"bit for bit now: drop {_id(script)} from LAST_BITS"
    assert set(outcome) == set(reference)
    for key, value in reference.items():
        if key in ("iterations", "scales"):
            assert outcome[key] == value, key
        else:
            flat = list(
                itertools.chain.from_iterable(v if isinstance(v, list) else [v] for v in value)
            )
            got = list(
                itertools.chain.from_iterable(
                    v if isinstance(v, list) else [v] for v in outcome[key]
                )
            )
            assert got == pytest.approx(flat, rel=tolerance), key


def _scale_columns(value: Any) -> list[list[Any]]:
    """Per-step values as one list per optimizer (scripts with two report pairs)."""
    return (
        [list(column) for column in zip(*value, strict=True)]
        if isinstance(value[0], list)
        else [value]
    )


def _under_keras_3s_rule(reference: dict[str, Any]) -> dict[str, Any] | None:
    """TF 2.15's numbers as Keras 3's own class gives them by design (docs/migration.md): a
    skipped step (the scale after it is lower than before) does not advance `iterations`.
    None where no step was skipped, or where the script reports no scale (no loss scale
    optimizer of its own) or no count per step. The first step of every script here is finite."""
    if "scales" not in reference or not isinstance(reference["iterations"], list):
        return None  # no scale, or only the count after training: no step to adjust
    scales, counts = _scale_columns(reference["scales"]), _scale_columns(reference["iterations"])
    adjusted = []
    for scale, count in zip(scales, counts, strict=True):
        if _backend.keras_version() < Version("3.9"):
            # Keras 3.0-3.8's own class has an `iterations` of its own that nothing advances
            # (keras-team/keras#20901, docs/migration.md): it stays 0.
            adjusted.append([0] * len(count))
            continue
        skipped = [False] + [after < before for before, after in itertools.pairwise(scale)]
        if not any(skipped):
            adjusted.append(count)
            continue
        adjusted.append(list(itertools.accumulate(not s for s in skipped)))
    if adjusted == counts:
        return None
    expected = dict(reference)
    expected["iterations"] = (
        [list(step) for step in zip(*adjusted, strict=True)] if len(adjusted) > 1 else adjusted[0]
    )
    return expected


@pytest.mark.skipif(not IS_KERAS_3, reason="--target keras3 output is for Keras 3's tf.keras")
@pytest.mark.parametrize("script", _cases("migrate-keras3"))
def test_migrated_to_keras3_keeps_tf215_numbers_or_reports_where_not(script):
    # Without the shim. Allowed: TF 2.15's numbers; Keras 3's by-design count of skipped steps;
    # a failure at a line the codemod reported and left as written; different numbers with
    # manual work or a note reported at a training call (apply_gradients, minimize, fit).
    # Anything else is a silent change of training.
    source = script.read_text()
    findings = migrate(source, "keras3").findings
    reported = {f.line for f in findings if not f.fixed or f.note}
    outcome = _outcomes("migrate-keras3")[script.resolve()]
    if isinstance(outcome, harness.ScriptFailed):
        failure = str(outcome)
        # The script's own frames, or its twin's: autograph caches converted functions by code
        # object, whose equality ignores the file name, so in one process a tf21 script's traced
        # function can be reported under its twin's path (the same source line). Each folder's
        # migrated copy is .../copy/.
        name = re.escape(script.name)
        frames = re.findall(rf'copy/{name}", line \d+, in .*\n\s+(.+)\n', failure)
        assert frames, f"no frame of {_id(script)} in:\n{failure}"
        lines = source.splitlines()
        failing = {n for n, line in enumerate(lines, start=1) if line.strip() == frames[-1]}
        assert failing & reported, (
            f"{_id(script)} fails at {frames[-1]!r} with nothing reported there "
            f"(reported lines: {sorted(reported)}):\n{failure[-1500:]}"
        )
        return
    reference = _reference(script)
    if outcome in (reference, _under_keras_3s_rule(reference)):
        return
    training = {n for n, line in enumerate(source.splitlines(), 1) if _TRAINING_CALL.search(line)}
    assert training & reported, (
        f"{_id(script)} trains differently on Keras 3 with no finding at a training call "
        f"(lines {sorted(training)}; reported: {sorted(reported)}):\n{outcome}\n{reference}"
    )


@pytest.mark.skipif(not IS_KERAS_3, reason="--target keras3 output is for Keras 3's tf.keras")
def test_a_loss_scaled_by_the_keras3_rewrite_that_overflows_differs_with_a_note_at_its_line():
    # The keras3 test above lets other numbers pass on a note at a training call: this script
    # must be such a case (its migrated run skips the steps TF 2.15 took), and the note must be
    # LSO020's, at the apply_gradients it rewrote.
    script = PATTERNS / f"{SCALED_OVERFLOW}.py"
    outcome = _outcome(script, "migrate-keras3")
    reference = _reference(script)
    assert reference["losses"] == [16.0, 4.0, 1.0, 0.25]
    assert outcome["losses"][:3] == [16.0, 16.0, 16.0]
    assert outcome not in (reference, _under_keras_3s_rule(reference))
    source = script.read_text()
    apply_line = next(
        n for n, line in enumerate(source.splitlines(), 1) if ".apply_gradients(" in line
    )
    notes = [(f.code, f.line) for f in migrate(source, "keras3").findings if f.note]
    assert ("LSO020", apply_line) in notes


def _run_with_the_audit() -> tuple[dict[pathlib.Path, Any], dict[str, Any]]:
    outcomes, audit = _batches()["run --audit"]
    return outcomes, audit


def _run_with_the_audit_once() -> tuple[dict[pathlib.Path, Any], dict[str, Any]]:
    """`python -m compat_lso run --audit-json FILE` over every script (one process): what each
    script reported, and the audit's JSON.

    One batch for two claims, where two batches of the same scripts through `run` ran before: the
    audit only records (it wraps the shim's methods and calls them), so `run --audit` must give
    TF 2.15's numbers just as `run` does (test_run_gives_tf215_numbers reads these outcomes), and
    its records are what the audit test reads. `run` without the audit runs the TF 2.4-2.15
    scripts and the experimental ones (test_tf24_scripts.py, test_run_unmodified.py).
    """
    with tempfile.TemporaryDirectory(prefix="compat-lso-audit-") as scratch:
        path = pathlib.Path(scratch) / "audit.json"
        outcomes = harness.run_scripts(
            SCRIPTS, "run", pythonpath=[PATTERNS], run_options=["--audit-json", str(path)]
        )
        return outcomes, json.loads(path.read_text())


def _audit() -> dict[str, Any]:
    # Under --audit each script must run as it does under `run` (its known failures aside).
    outcomes, audit = _run_with_the_audit()
    known = {script for script, mode in KNOWN_FAILURES if mode == "run"}
    failed = [
        _id(s)
        for s in SCRIPTS
        if isinstance(outcomes[s.resolve()], Exception) and _id(s) not in known
    ]
    assert not failed, f"scripts failed under run --audit: {failed}"
    return audit


@pytest.mark.skipif(not IS_KERAS_3, reason="the audit names what Keras 3's own class changes")
@pytest.mark.parametrize("script", _cases("run-keep-native"))
def test_the_audit_names_every_script_that_keras_3s_own_class_trains_differently(script):
    # The unmodified script on Keras 3's own class (`run --keep-native`: TF 2.1-2.3's names are
    # restored, TF 2.4's class is Keras 3's) is the divergence the audit must find in a real run
    # through the shim: a failure or other numbers there need at least one record in the file.
    native = _outcomes("run-keep-native")[script.resolve()]
    if native == _reference(script):
        return
    audit = _audit()
    assert audit["keras_3"] is True
    files = {pathlib.Path(record["file"]).resolve() for record in audit["records"]}
    assert script.resolve() in files, (
        f"{_id(script)} trains differently on Keras 3's own class, and `run --audit` recorded "
        f"nothing in it:\n{str(native)[-1200:]}"
    )
