"""The comparator and the report on trace files written here by hand (no TensorFlow).

Each trace is what compat_lso.trace writes (docs/verify.md, "The trace"); the verdicts below
are worked out from the values written, never taken from the code under test.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from compat_lso.verify import cli, compare, plot, report, sides, trace_file
from compat_lso.verify import reasons as reasons_


def _step(optimizer=0, step=1, scale=(1024.0, 1024.0), applied=True, iterations=None, loss=0.5,
          digest=(("dense/kernel", 2.25),)):  # fmt: skip
    return {
        "event": "step",
        "optimizer": optimizer,
        "class": "keras.src.optimizers.loss_scale_optimizer.LossScaleOptimizer",
        "step": step,
        "where": "/repo/train.py:17",
        "scale_before": scale[0],
        "scale_after": scale[1],
        "applied": applied,
        "iterations": step if iterations is None else iterations,
        "loss": loss,
        "digest": [list(d) for d in digest],
    }


def _write(tmp_path, name, steps, end=None, start=True, tail=""):
    path = tmp_path / f"{name}.jsonl"
    lines = [{"event": "start", "versions": {}, "argv": ["train.py"], "steps": 4}] if start else []
    lines += steps
    if end is not None:
        lines.append(end)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + tail)
    return trace_file.read(path)


STOPPED = {"event": "stopped", "reason": "steps", "steps": 4}
EXIT_0 = {"event": "exit", "status": 0}


def _run(tmp_path, before, after, before_end=STOPPED, after_end=STOPPED, rtol=0.0):
    return compare.compare(
        _write(tmp_path, "before", before, before_end),
        _write(tmp_path, "after", after, after_end),
        rtol,
    )


def _four(**changes):
    """Four steps of one optimizer; `changes`: step number -> keyword arguments of _step."""
    return [_step(step=s, **changes.get(f"s{s}", {})) for s in range(1, 5)]


def test_equal_traces_are_equal(tmp_path):
    outcome = _run(tmp_path, _four(), _four())
    assert (outcome.status, outcome.exit_status, outcome.compared) == ("equal", 0, 4)
    assert outcome.divergence is None


def test_the_first_differing_step_is_found_with_its_field(tmp_path):
    # Step 3's scale after the update differs (a skipped step on one side only), and step 4's.
    after = _four(s3={"scale": (1024.0, 512.0), "applied": False},
                  s4={"scale": (512.0, 512.0)})  # fmt: skip
    outcome = _run(tmp_path, _four(), after)
    assert (outcome.status, outcome.exit_status) == ("diverged", 1)
    assert (outcome.divergence.step, outcome.divergence.position, outcome.compared) == (3, 3, 2)
    fields = {d.field: (d.before, d.after) for d in outcome.divergence.differences}
    assert fields == {"scale_after": (1024.0, 512.0), "applied": (True, False)}
    assert "step 3 of loss scale optimizer 0" in outcome.message


def test_iterations_differ_alone(tmp_path):
    # Keras 3's rule: the skipped step is not counted, everything else the same.
    after = _four(s2={"iterations": 1}, s3={"iterations": 2}, s4={"iterations": 3})
    outcome = _run(tmp_path, _four(), after)
    assert outcome.divergence.step == 2
    assert [(d.field, d.before, d.after) for d in outcome.divergence.differences] == [
        ("iterations", 2, 1)
    ]


def test_nan_equals_nan_and_inf_equals_inf(tmp_path):
    both = _four(s2={"loss": math.nan, "scale": (1024.0, 512.0), "applied": False},
                 s3={"digest": (("dense/kernel", math.inf),)},
                 s4={"digest": (("dense/kernel", math.nan),)})  # fmt: skip
    assert _run(tmp_path, both, both).status == "equal"


def test_a_rounding_difference_is_caught_bit_for_bit_and_accepted_within_rtol(tmp_path):
    after = _four(s2={"digest": (("dense/kernel", 2.25 * (1 + 1e-9)),)})
    exact = _run(tmp_path, _four(), after)
    assert exact.divergence.step == 2
    assert exact.divergence.differences[0].variable == "dense/kernel"
    assert _run(tmp_path, _four(), after, rtol=1e-6).status == "equal"
    # rtol never excuses a different count or a different decision to apply.
    counted = _four(s2={"iterations": 3})
    assert _run(tmp_path, _four(), counted, rtol=0.5).divergence.step == 2


def test_bytes_that_differ_under_equal_sums_diverge_bit_for_bit_and_pass_within_rtol(tmp_path):
    # One ulp of one weight, below the float32 rounding of its sum of squares: only the
    # fingerprint of the bytes differs. Bit for bit that is a divergence; --rtol accepts
    # rounding, bytes too.
    before = _four(s2={"digest": (("dense/kernel", 2.25, "00112233445566aa"),)})
    after = _four(s2={"digest": (("dense/kernel", 2.25, "00112233445566ab"),)})
    exact = _run(tmp_path, before, after)
    assert (exact.divergence.step, exact.divergence.differences[0].field) == (2, "digest")
    assert "00112233445566ab" in exact.message
    assert _run(tmp_path, before, after, rtol=1e-6).status == "equal"
    assert _run(tmp_path, before, before).status == "equal"


def test_bit_for_bit_stays_the_verdict_where_it_holds_and_a_tolerance_says_so(tmp_path):
    # --before-python's comparison: exact first; where that diverges, within the tolerance
    # (the releases' float16 rounding), saying how many steps were not exact; beyond it, the
    # first step past it.
    slightly = {f"s{s}": {"loss": 0.5 * (1 + 1e-3)} for s in (2, 3)}
    before, after = (
        _write(tmp_path, "b", _four(), STOPPED),
        _write(tmp_path, "a", _four(**slightly), STOPPED),
    )
    exact, rtol = compare.compare_within(before, before, 2.0**-7)
    assert (exact.status, rtol) == ("equal", 0.0)
    assert report.verdict_line(exact, rtol).endswith("), bit for bit")
    within, rtol = compare.compare_within(before, after, 2.0**-7)
    assert (within.status, rtol) == ("equal", 2.0**-7)
    assert within.message.endswith("; 2 of them not bit for bit")
    assert report.verdict_line(within, rtol).endswith("not bit for bit, within rtol=0.0078125")
    beyond = _write(tmp_path, "c", _four(s3={"loss": 0.5 * (1 + 2**-6)}), STOPPED)
    outcome, _ = compare.compare_within(before, beyond, 2.0**-7)
    assert outcome.divergence is not None
    assert (outcome.status, outcome.divergence.step) == ("diverged", 3)


def test_none_gradients_and_another_learning_rate_are_named_first(tmp_path):
    # A break of the upgrade, not of loss scaling (issue 39, case 9): Keras 3 gave two of four
    # variables no gradient, and never called the optimizer's _decayed_lr override.
    rows = (("dense/kernel", 2.25), ("dense/bias", 0.5), ("out/kernel", 1.0), ("out/bias", 0.1))
    old = [{**_step(step=s, digest=rows), "learning_rate": 0.05, "gradients": 4,
            "none_gradients": 0} for s in (1, 2)]  # fmt: skip
    new = [{**_step(step=s, digest=rows[2:]), "learning_rate": 0.1, "gradients": 4,
            "none_gradients": 2} for s in (1, 2)]  # fmt: skip
    before, after = _write(tmp_path, "b", old, STOPPED), _write(tmp_path, "a", new, STOPPED)
    outcome, _ = compare.compare_within(before, after, 2.0**-7)
    assert outcome.divergence is not None and outcome.divergence.step == 1
    assert [(d.field, d.before, d.after) for d in outcome.divergence.differences] == [
        ("none_gradients", "0 of 4", "2 of 4"),
        ("learning_rate", 0.05, 0.1),
    ]
    assert outcome.message.endswith(
        "gradients None: 0 of 4 before, 2 of 4 after (a variable with none is not updated); "
        "learning rate 0.05 before, 0.1 after"
    )
    text = report.divergence_text(outcome.divergence, reasons_.Reasons(), "HEAD")
    assert "learning rate 0.1, gradients None: 2 of 4" in text
    assert "  not loss scaling: gradients None in one run only and another learning rate" in text


def test_every_loss_a_step_scaled_is_shown_and_compared(tmp_path):
    # Two losses scaled per step (a CTC head and a regulariser): both shown, in order, and
    # each compared; the second one differing is a divergence of its own.
    two = [{**_step(step=s), "losses": [0.5, 0.25]} for s in (1, 2)]
    other = [{**_step(step=s), "losses": [0.5, 0.25 if s == 1 else 0.3]} for s in (1, 2)]
    before, after = _write(tmp_path, "b", two, STOPPED), _write(tmp_path, "a", other, STOPPED)
    outcome = compare.compare(before, after)
    assert outcome.divergence is not None and outcome.divergence.step == 2
    assert [(d.field, d.before, d.after) for d in outcome.divergence.differences] == [
        ("loss 2", 0.25, 0.3)
    ]
    lines = report.table(before, after, outcome.divergence, rows=10).splitlines()
    assert lines[1].split()[1:5] == ["0.5,", "0.25", "0.5,", "0.25"]
    assert lines[-1].startswith("(loss: each loss the step scaled through the optimizer, in order")
    # A trace written before `losses` existed: its one `loss` is the list.
    assert trace_file.Step.from_record(_step(loss=0.75)).losses == (0.75,)


def test_a_loss_only_one_run_handed_over_is_not_compared(tmp_path):
    # The old code applied gradients of an unscaled loss (no loss in its trace); the new one
    # scales it through the optimizer. The digest still compares what the step did.
    outcome = _run(tmp_path, _four(s1={"loss": None}), _four())
    assert outcome.status == "equal"


def test_optimizers_are_matched_by_order_of_creation_not_by_line_order(tmp_path):
    # A GAN: before steps D then G, after steps G then D in each iteration; same values.
    def gan(order):
        return [_step(optimizer=o, step=s, loss=float(o)) for s in (1, 2) for o in order]

    assert _run(tmp_path, gan((0, 1)), gan((1, 0))).status == "equal"
    changed = gan((0, 1))
    changed[3] = _step(optimizer=1, step=2, loss=1.0, scale=(1024.0, 2048.0))
    outcome = _run(tmp_path, gan((0, 1)), changed)
    assert (outcome.divergence.optimizer, outcome.divergence.step) == (1, 2)
    assert outcome.divergence.position == 4


def test_an_after_run_that_fails_after_two_steps_diverges_at_the_third(tmp_path):
    error = {"event": "error", "type": "ValueError", "message": "no gradients"}
    outcome = _run(tmp_path, _four(), _four()[:2], after_end=error)
    assert outcome.status == "diverged"
    assert (outcome.divergence.step, outcome.divergence.after) == (3, None)
    assert "ValueError: no gradients" in outcome.message


def test_steps_only_the_after_run_made_come_last(tmp_path):
    outcome = _run(tmp_path, _four()[:3], _four(), before_end=EXIT_0)
    assert (outcome.divergence.step, outcome.divergence.before, outcome.divergence.position) == (
        4, None, 4,
    )  # fmt: skip


def test_a_run_that_fails_before_its_first_step_cannot_be_compared(tmp_path):
    error = {"event": "error", "type": "AttributeError", "message": "no get_scaled_loss"}
    outcome = _run(tmp_path, _four(), [], after_end=error)
    assert (outcome.status, outcome.exit_status) == ("could not run", 2)
    assert outcome.message.startswith("the after run failed before its first step")
    assert "AttributeError: no get_scaled_loss" in outcome.message
    # No trace at all (the process never started tracing): the same.
    missing = compare.compare(
        trace_file.read(tmp_path / "absent.jsonl"), _write(tmp_path, "a", _four(), STOPPED)
    )
    assert missing.status == "could not run" and "before run" in missing.message


def test_both_runs_failing_before_their_first_step_are_both_named(tmp_path):
    exit_1 = {"event": "exit", "status": 1}
    alike = _run(tmp_path, [], [], before_end=exit_1, after_end=exit_1)
    assert (alike.status, alike.message) == (
        "could not run", "both runs failed before their first step: each ended with exit status 1",
    )  # fmt: skip
    error = {"event": "error", "type": "ImportError", "message": "no module named keras"}
    unlike = _run(tmp_path, [], [], before_end=exit_1, after_end=error)
    assert unlike.message == (
        "the before run failed before its first step: it ended with exit status 1 and the after "
        "run failed before its first step: it raised ImportError: no module named keras"
    )


def test_a_failed_runs_exit_status_is_said_once(tmp_path, capsys):
    exit_1 = {"event": "exit", "status": 1}
    traces = {
        "before": _write(tmp_path, "before", [], exit_1),
        "after": _write(tmp_path, "after", [], {"event": "error", "type": "E", "message": "m"}),
    }
    runs = []
    for name in ("before", "after"):
        (tmp_path / f"{name}.log").write_text(f"{name} output\n")
        side = sides.Side(name, [], [], tmp_path / f"{name}.jsonl", tmp_path / f"{name}.log")
        side.returncode = 1
        runs.append(side)
    outcome = compare.compare(traces["before"], traces["after"])
    cli._print(outcome, traces, runs, None, label="HEAD", rtol=0.0)
    printed = capsys.readouterr().out
    assert printed.count("exit status 1") == 3  # the verdict, then once for each run
    assert "the before run ended with exit status 1; its output ends:" in printed
    assert "the after run raised E: m; exit status 1; its output ends:" in printed


def test_each_run_can_write_its_outputs_apart(tmp_path):
    # The program's arguments: `{side}` is each run's name; the variable too.
    program = ["train.py", "--logdir", "runs/{side}", "--csv={side}.csv"]
    assert sides.for_side(program, "before") == [
        "train.py", "--logdir", "runs/before", "--csv=before.csv",
    ]  # fmt: skip
    for name in ("before", "after"):
        side = sides.Side(name, [], [], tmp_path / "t.jsonl", tmp_path / "o.log")
        assert sides.environment(side, tmp_path, 4, None)["COMPAT_LSO_VERIFY_SIDE"] == name


def test_no_loss_scale_optimizer_stepped_in_either_run(tmp_path):
    outcome = _run(tmp_path, [], [], before_end=EXIT_0, after_end=EXIT_0)
    assert outcome.exit_status == 2
    assert "no loss scale optimizer was ever stepped" in outcome.message


def test_both_runs_ending_early_alike_are_equal_and_both_failing_is_not(tmp_path):
    ended = _run(tmp_path, _four()[:3], _four()[:3], EXIT_0, EXIT_0)
    assert (ended.status, ended.message) == (
        "equal", "3 steps equal (1 loss scale optimizer; the program ended before 4 steps)",
    )  # fmt: skip
    assert _run(tmp_path, _four(), _four()).message == "4 steps equal (1 loss scale optimizer)"
    error = {"event": "error", "type": "RuntimeError", "message": "disk full"}
    outcome = _run(tmp_path, _four()[:3], _four()[:3], error, error)
    assert (outcome.status, outcome.compared) == ("could not run", 3)
    assert "3 steps equal, then the before run raised RuntimeError" in outcome.message


def test_a_killed_runs_half_line_ends_its_trace(tmp_path):
    trace = _write(tmp_path, "killed", _four()[:2], tail='{"event": "step", "optim')
    assert (len(trace.steps), trace.end, trace.failed) == (2, None, True)
    assert trace_file.count_steps(tmp_path / "killed.jsonl") == {0: 2}


def test_the_table_marks_the_diverging_row_and_shows_both_sides(tmp_path):
    before = _write(tmp_path, "b", _four(), STOPPED)
    after = _write(tmp_path, "a", _four(s3={"scale": (1024.0, 512.0), "applied": False}), STOPPED)
    outcome = compare.compare(before, after)
    lines = report.table(before, after, outcome.divergence, rows=2).splitlines()
    # The header, steps 1-3 (two rows asked for, extended to the divergence and one past it),
    # and step 4.
    assert re.split(r"\s{2,}", lines[0].strip()) == [
        "step", "before: loss", "after: loss", "before: scale", "after: scale", "applied b/a",
        "iterations b/a",
    ]  # fmt: skip
    assert [line.split()[0] for line in lines[1:5]] == ["1", "2", "3", "4"]
    # The scale each run's step used, and where the step changed it, the one it left.
    assert lines[3].split()[:9] == ["3", "0.5", "0.5", "1024", "1024", "->", "512", "yes/no", "3/3"]
    assert lines[3].endswith("<- differs: applied, scale_after")
    assert "differs" not in lines[2] + lines[4]
    assert lines[5] == "(scale: the one the step used; -> the one it left for the next step)"
    assert "(scale:" not in report.table(before, before, None, rows=10)
    assert report.verdict_line(outcome, 0.0).startswith("verify: DIVERGED: diverged at step 3")


def test_every_differing_row_is_marked_and_a_missing_loss_explained(tmp_path):
    # Keras 3 did not count step 2 (skipped): iterations differ from there on, and the Adam
    # update of step 3 with them (its digest); step 4 is only the before run's.
    before = _write(tmp_path, "b", _four(s2={"applied": False}), STOPPED)
    after_steps = _four(
        s2={"applied": False, "iterations": 1, "loss": None},
        s3={"iterations": 2, "digest": (("dense/kernel", 2.0),)},
    )[:3]
    after = _write(tmp_path, "a", after_steps, STOPPED)
    outcome = compare.compare(before, after)
    lines = report.table(before, after, outcome.divergence, rows=10).splitlines()
    assert "differs" not in lines[1]
    assert lines[2].endswith("<- differs: iterations")  # a row with no loss: nothing to compare
    assert lines[3].endswith("<- differs: digest, iterations")
    assert lines[4].endswith("<- only the before run made this step")
    assert lines[5].startswith("(loss -: that run scaled no loss through the optimizer's")
    plain = report.table(before, before, None, rows=10)
    assert "differs" not in plain and "loss -" not in plain


def test_json_names_each_steps_line_relative_to_its_sides_tree(tmp_path):
    # The before run's files lie in the REF's temporary checkout, the after run's in the
    # repository: both read as the same repository path.
    checkout, repository = tmp_path / "tmp" / "before", tmp_path / "repo"
    before = _write(tmp_path, "b", [{**_step(), "where": f"{checkout}/src/train.py:17"}], STOPPED)
    after = _write(tmp_path, "a", [{**_step(), "where": f"{repository}/src/train.py:15"}], STOPPED)
    roots = {"before": checkout, "after": repository, "cwd": repository / "src"}
    outcome = compare.compare(before, after)
    document = report.document(outcome, {"before": (before, {}), "after": (after, {})}, None, {},
                               roots=roots)  # fmt: skip
    assert document["before"]["steps"][0]["where"] == "src/train.py:17"
    assert document["after"]["steps"][0]["where"] == "src/train.py:15"


def test_json_spells_non_finite_numbers_as_strings(tmp_path):
    before = _write(tmp_path, "b", _four(s2={"loss": math.nan}), STOPPED)
    outcome = compare.compare(before, before)
    path = tmp_path / "out.json"
    report.write_json(path, report.document(outcome, {"before": (before, {})}, None, {}))
    document = json.loads(path.read_text(), parse_constant=pytest.fail)
    assert document["verdict"] == "equal" and document["before"]["steps"][1]["loss"] == "nan"


def test_plot_draws_both_runs_on_one_figure(tmp_path):
    pytest.importorskip("matplotlib", reason="the `plot` extra (matplotlib) is not installed here")
    from matplotlib import image

    before = _write(tmp_path, "b", _four(), STOPPED)
    after = _write(tmp_path, "a", _four(s3={"scale": (1024.0, 512.0)}), STOPPED)
    path = tmp_path / "runs.png"
    plot.plot(path, before, after, compare.compare(before, after))
    height, width, _ = image.imread(path).shape
    assert (width, height) == (800, 600)  # figsize 8x6 at matplotlib's default 100 dpi


def test_the_plots_title_is_the_verdict_and_no_loss_draws_no_loss_panel(tmp_path):
    pytest.importorskip("matplotlib", reason="the `plot` extra (matplotlib) is not installed here")
    import warnings

    error = {"event": "error", "type": "RuntimeError", "message": "disk full"}
    cases = {
        "equal": (_four(), _four(), STOPPED),
        "diverged at step 3": (_four(), _four(s3={"scale": (1024.0, 512.0)}), STOPPED),
        "could not run": (_four()[:2], _four()[:2], error),
    }
    for verdict, (before_steps, after_steps, end) in cases.items():
        before = _write(tmp_path, "b", before_steps, end)
        after = _write(tmp_path, "a", after_steps, end)
        drawn = plot.figure(before, after, compare.compare(before, after))
        assert drawn.axes[0].get_title() == f"compat_lso verify: {verdict}"
        assert [a.get_ylabel() for a in drawn.axes] == ["loss", "loss scale (after the step)"]
    # Neither run scaled its loss through the optimizer: the scale alone, and no warning.
    unscaled = _four(**{f"s{s}": {"loss": None} for s in range(1, 5)})
    before = _write(tmp_path, "b", unscaled, STOPPED)
    after = _write(tmp_path, "a", unscaled, STOPPED)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drawn = plot.figure(before, after, compare.compare(before, after))
    assert [a.get_ylabel() for a in drawn.axes] == ["loss scale (after the step)"]
    assert drawn.axes[0].get_title() == (
        "compat_lso verify: equal (no loss scaled through the optimizer: scale only)"
    )


def test_nothing_recorded_says_when_the_audit_was_off(tmp_path):
    from compat_lso.verify import explain

    before = _write(tmp_path, "b", _four(), STOPPED)
    after = _write(tmp_path, "a", _four(s2={"iterations": 1}), STOPPED)
    divergence = compare.compare(before, after).divergence
    assert divergence is not None
    at = explain.place("/repo/train.py:17", None, tmp_path)
    # What `run --audit` writes on Keras 2 (compat_lso/audit's finish()), and no file at all.
    keras2 = tmp_path / "audit.json"
    keras2.write_text(json.dumps({"keras": "keras 2.15.0", "keras_3": False, "records": []}))
    texts = {}
    for name, path in (("keras2", keras2), ("none", tmp_path / "absent.json")):
        off = explain.audit_off(explain.audit_document(path))
        reasons = reasons_.Reasons(before_place=at, step=divergence.step, audit=[], audit_off=off)
        texts[name] = report.divergence_text(divergence, reasons, "HEAD")
    assert (
        f"audit: nothing recorded at step 2 ({at}): the before run was on Keras 2 (keras "
        "2.15.0): Keras 2's own LossScaleOptimizer ran, so Keras 3's differences were not audited"
    ) in texts["keras2"]
    assert (
        f"audit: nothing recorded at step 2 ({at}): the before run wrote no audit"
        in (texts["none"])
    )
    on = {"keras": "keras 3.15.1", "keras_3": True, "records": []}
    assert explain.audit_off(on) is None


def test_a_divergence_names_the_codemods_findings_of_the_migration_made(tmp_path):
    # The old file and the working tree's, as --target keras3 wrote it: that target is named,
    # with its findings at the old file's lines (the codemod imported lazily, as verify does).
    from codemods.apply import engine
    from compat_lso.verify import explain

    old = (
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        "def step(x, v):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = tf.reduce_sum(x * v)\n"
        "    grads = opt.get_unscaled_gradients(tape.gradient(loss, v))\n"
        "    opt.apply_gradients(zip(grads, v))\n"
    )
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(old)
    after.write_text(engine.migrate(old, "keras3").text)
    targets, findings = explain.codemod_findings(before, after)
    assert "keras3" in targets and "shim" not in targets  # keras2 leaves this file as it is
    found = [(f.target, f.code, f.line, f.kind) for f in findings]
    assert ("keras3", "LSO011", 6, "manual work") in found


MODELS = """\
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision


class Trainer:
    def __init__(self):
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        self.optimizer = mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.Adam(1e-3), loss_scale="dynamic"
        )
"""
DRIVER = """\
import tensorflow as tf

from models import Trainer

trainer = Trainer()


@tf.function
def step(x, y):
    variables = trainer.model.trainable_variables
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(trainer.model(x) - y))
        scaled = trainer.optimizer.get_scaled_loss(loss)
    grads = trainer.optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
    trainer.optimizer.apply_gradients(zip(grads, variables))
"""


def test_a_divergence_names_the_note_at_the_optimizers_line_in_another_module(tmp_path):
    # Issue 38: a model module that makes the loss scale optimizer and a driver that steps it,
    # migrated with --target keras3. Keras 3 does not count the skipped step 2: the divergence
    # is in the driver, its explanation LSO022's note at models.py's optimizer line, which the
    # codemod must read because the runs imported it (the trace's "modules" line).
    from codemods.apply import engine

    checkout, repository = tmp_path / "checkout", tmp_path / "repository"
    for root, migrate in ((checkout, False), (repository, True)):
        root.mkdir()
        for name, text in (("models.py", MODELS), ("train.py", DRIVER)):
            (root / name).write_text(engine.migrate(text, "keras3").text if migrate else text)
    step_line = _index(DRIVER, "trainer.optimizer.apply_gradients(")
    made_line = _index(MODELS, "self.optimizer = mixed_precision.LossScaleOptimizer(")
    traces = {}
    for side, root, counted in (("before", checkout, 2), ("after", repository, 1)):
        steps = [
            {
                **_step(step=s, applied=s != 2, iterations=s if s < 2 else counted),
                "where": f"{root}/train.py:{step_line + 1}",
                "created": f"{root}/models.py:{made_line + 1}",
                "audit": [],
            }
            for s in (1, 2)
        ]
        modules = {"event": "modules", "files": [str(root / "models.py"), str(root / "train.py")]}
        traces[side] = _write(tmp_path, side, [*steps, modules], STOPPED)
    divergence = compare.compare(traces["before"], traces["after"]).divergence
    assert divergence is not None and divergence.step == 2
    runs = [
        sides.Side("before", [], [], tmp_path / "b", tmp_path / "b.log", root=checkout),
        sides.Side("after", [], [], tmp_path / "a", tmp_path / "a.log"),
    ]
    gathered = reasons_.gather(divergence, runs, traces, repository, repository)
    assert set(gathered.targets) == {"models.py", "train.py"}
    assert "keras3" in gathered.targets["models.py"]
    # keras3 made both files (keras2 writes models.py alike, not train.py): its findings alone.
    assert gathered.targets["train.py"] == ["keras3"], gathered.targets
    assert {f.target for f in gathered.findings} == {"keras3"}
    text = report.divergence_text(divergence, gathered, "HEAD")
    assert re.search(
        rf"models\.py:{made_line + 1}: LSO022 \[note, --target keras3\] .*<- the optimizer's line",
        text,
    ), text
    assert f"the step's line: train.py:{step_line + 1} before" in text
    assert "over the project's files both runs imported (models.py, train.py)" in text


def _index(text: str, part: str) -> int:
    """The 0-based number of the line of `text` that holds `part`."""
    return next(number for number, line in enumerate(text.splitlines()) if part in line)
