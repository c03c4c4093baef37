"""The step trace (compat_lso.trace) against independent references.

One TensorFlow process per backend runs every scenario (tests/trace/scripts/scenarios.py) under
`python -m compat_lso trace`; the script reads the trained variables directly after each step.
The trace's scales, `applied` and `iterations` are checked against tables worked out by hand from
each rule (Keras 2: halve to no less than 1 on inf/nan, double after `dynamic_growth_steps`
finite steps, count every step; Keras 3: halve with no floor, a skipped step not counted), its
digests and losses against the script's direct readings. A second process runs under
`python -m compat_lso run` and ends after N steps. Processes run at once (module fixture).
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from compat_lso import __main__ as cli
from compat_lso import trace
from compat_lso.trace import recorder
from compat_lso.verify import compare, trace_file

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "scenarios.py"
SCRIPT_LINES = SCRIPT.read_text().splitlines()
STOP_SCENARIOS = "dropped,two_function"
TIMEOUT_S = 300

BEHIND = recorder.versions()["tf.keras"] or ""
TF_KERAS = BEHIND.startswith("tf_keras")
KERAS_3 = BEHIND.startswith("keras 3")

# Per backend: the classes (scenarios.py's CLASSES) and scenarios of the main process.
ALL_SCENARIOS = [
    "eager", "function", "fixed", "two", "mirrored", "losses", "ulp", "fit", "operations",
]  # fmt: skip
if KERAS_3:
    KINDS, SCENARIOS = ["native", "compat"], [*ALL_SCENARIOS, "factor"]
elif TF_KERAS:  # one check of tf_keras's class (the rest is Keras 2's code, tested on tf215)
    KINDS, SCENARIOS = ["native"], ["eager", "function", "losses", "ulp", "operations"]
else:
    KINDS, SCENARIOS = ["native", "legacy", "compat"], ALL_SCENARIOS

PACKAGE = "tf_keras" if TF_KERAS else "keras"
KERAS_2_MODULE = f"{PACKAGE}.src.mixed_precision.loss_scale_optimizer"
CLASSES = {
    "native": "keras.src.optimizers.loss_scale_optimizer.LossScaleOptimizer"
    if KERAS_3
    else f"{KERAS_2_MODULE}.LossScaleOptimizerV3",
    "legacy": f"{KERAS_2_MODULE}.LossScaleOptimizer",
    "compat": "compat_lso.keras3.optimizer.LossScaleOptimizer"
    if KERAS_3
    else "compat_lso.keras2.optimizer.LossScaleOptimizer",
}
CLASSES["fit"] = CLASSES["wrapping"] = CLASSES["native"]
CLASSES["factor"] = "keras.src.optimizers.sgd.SGD"  # a plain optimizer with loss_scale_factor
CLASSES["tf24"] = CLASSES["compat"] if KERAS_3 else CLASSES["native"]  # under `run`

# Worked out by hand: initial_scale=2, dynamic_growth_steps=2, data 1, inf, inf, 1, 1, 1 (the
# loop scenarios): scale before and after each step, applied, iterations after.
KERAS_2_RULE: dict[str, list[Any]] = {
    "before": [2, 2, 1, 1, 1, 2],
    "after": [2, 1, 1, 1, 2, 2],  # halved to 1, held at 1 (floor), doubled after 2 good steps
    "applied": [True, False, False, True, True, True],
    "iterations": [1, 2, 3, 4, 5, 6],  # skipped steps count
}
KERAS_3_RULE: dict[str, list[Any]] = {
    "before": [2, 2, 1, 0.5, 0.5, 1],
    "after": [2, 1, 0.5, 0.5, 1, 1],  # no floor: 1 -> 0.5
    "applied": [True, False, False, True, True, True],
    "iterations": [1, 1, 1, 2, 3, 4],  # skipped steps do not count
}
# `fixed`: dynamic=False, initial_scale=8, data 1, inf, 1: every step applies (inf too); the
# same for `factor`'s plain SGD(loss_scale_factor=8), which has no other rule.
FIXED: dict[str, list[Any]] = {
    "before": [8, 8, 8],
    "after": [8, 8, 8],
    "applied": [True] * 3,
    "iterations": [1, 2, 3],
}
# `two`: the second optimizer steps, then the first, then the second again (data 1, 1, 1).
TWO: dict[str, list[Any]] = {
    "before": [2, 2, 2],
    "after": [2, 2, 4],  # the second one's second good step doubles
    "applied": [True] * 3,
    "iterations": [1, 1, 2],
}
# `mirrored`: data 1, inf (both replicas), 1.
MIRRORED_KERAS_2: dict[str, list[Any]] = {
    "before": [2, 2, 1],
    "after": [2, 1, 1],
    "applied": [True, False, True],
    "iterations": [1, 2, 3],
}
MIRRORED_KERAS_3: dict[str, list[Any]] = {**MIRRORED_KERAS_2, "iterations": [1, 1, 2]}
# `fit`: compile()'s wrapping, default scale 2**15, growth after 2000 steps: 4 good steps.
FIT: dict[str, list[Any]] = {"before": [2.0**15] * 4, "after": [2.0**15] * 4, "applied": [True] * 4}
FIT["iterations"] = [1, 2, 3, 4]
# `losses`: four good steps (two eager, two in a tf.function), initial_scale=2, growth after 2.
LOSSES: dict[str, list[Any]] = {
    "before": [2, 2, 4, 4],
    "after": [2, 4, 4, 8],
    "applied": [True] * 4,
    "iterations": [1, 2, 3, 4],
}
# The learning rate each scenario's optimizer was made with (`two`: the second one, 0.2, steps
# first, then the first one, 0.1); what the trace must read for each step (float32).
RATES = {"two": [0.2, 0.1, 0.2], "fit": [0.01] * 4}


def keras_3_rule(kind: str) -> bool:
    return KERAS_3 and kind == "native"  # compat_lso's class keeps Keras 2's rule on Keras 3


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_LSO_")}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="-1", **extra)
    return env


def _read(path: pathlib.Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, Any]]:
    """Start every process at once; wait for all; hand each one's trace, output and status."""
    with tempfile.TemporaryDirectory(prefix="compat_lso_trace_") as scratch:
        tmp = pathlib.Path(scratch)
        # What python sets (sys.argv, sys.path) and the variable children would inherit.
        program = tmp / "program"
        program.mkdir()
        (program / "exits.py").write_text(
            "import json, os, sys\n"
            "print(json.dumps([sys.argv, sys.path, os.environ.get('COMPAT_LSO_TRACE')]))\n"
            "sys.exit(3)\n"
        )
        (tmp / "raises.py").write_text("raise ValueError('bad value')\n")
        python = [sys.executable, "-m", "compat_lso"]
        main_args = [str(tmp / "main.json"), ",".join(KINDS), ",".join(SCENARIOS)]
        commands = {
            "main": (
                [*python, "trace", str(SCRIPT), *main_args],
                {"COMPAT_LSO_TRACE": str(tmp / "main.jsonl")},
            ),
            # The old side: `run`, the TF 2.4 name, two optimizers in tf.functions, stop after
            # one step each (the first one made is dropped unstepped: collected, not waited for).
            "stop": (
                [*python, "run", str(SCRIPT), str(tmp / "stop.json"), "tf24", STOP_SCENARIOS],
                {"COMPAT_LSO_TRACE": str(tmp / "stop.jsonl"), "COMPAT_LSO_TRACE_STEPS": "1"},
            ),
            # No TensorFlow: the last line at an exit status, and at an uncaught exception.
            "exits": (
                [*python, "trace", "-o", str(tmp / "exits.jsonl"), str(program / "exits.py"), "a"],
                {},
            ),
            "module": ([*python, "trace", "-o", str(tmp / "module.jsonl"), "-m", "exits", "a"], {}),
            "raises": (
                [*python, "trace", str(tmp / "raises.py")],
                {"COMPAT_LSO_TRACE": str(tmp / "raises.jsonl")},
            ),
            # The reference: python itself.
            "python": ([sys.executable, str(program / "exits.py"), "a"], {}),
            "python-m": ([sys.executable, "-m", "exits", "a"], {}),
        }
        # From the program's folder (`-m` finds modules in the current one), but for the rest.
        cwd = {"module": program, "python-m": program}
        processes = {
            name: subprocess.Popen(
                argv,
                env=_environment(**extra),
                cwd=cwd.get(name, tmp),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name, (argv, extra) in commands.items()
        }
        results: dict[str, Any] = {}
        try:
            for name, process in processes.items():
                out, err = process.communicate(timeout=TIMEOUT_S)
                trace_file = tmp / f"{name}.jsonl"
                results[name] = {
                    "status": process.returncode,
                    "stdout": out,
                    "stderr": err,
                    "trace": _read(trace_file) if trace_file.exists() else [],
                }
            references = tmp / "main.json"
            found = references.exists()
            results["references"] = json.loads(references.read_text()) if found else None
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.kill()
                    process.wait()
        yield results


def _steps(run: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in run["trace"] if r["event"] == "step"]


def _main_ran(runs: dict[str, Any]) -> None:
    main = runs["main"]
    assert main["status"] == 0 and runs["references"] is not None, main["stderr"][-3000:]


def _plan() -> list[tuple[str, str, int, dict[str, list[Any]]]]:
    """(scenario, kind, optimizer index, expected row) for each step, in the script's order; the
    index is the optimizer's place in the order of creation."""
    plan = []
    created = 0
    for kind in KINDS:
        rules = KERAS_3_RULE if keras_3_rule(kind) else KERAS_2_RULE
        for scenario in SCENARIOS:
            if scenario in ("eager", "function"):
                plan += [(scenario, kind, created, _row(rules, i)) for i in range(6)]
                created += 1
            elif scenario == "fixed" and not keras_3_rule(kind):
                plan += [("fixed", kind, created, _row(FIXED, i)) for i in range(3)]
                created += 1
            elif scenario == "two":
                order = [created + 1, created, created + 1]  # the second one steps first
                plan += [("two", kind, k, _row(TWO, i)) for i, k in enumerate(order)]
                created += 2
            elif scenario == "mirrored":
                rules = MIRRORED_KERAS_3 if keras_3_rule(kind) else MIRRORED_KERAS_2
                plan += [("mirrored", kind, created, _row(rules, i)) for i in range(3)]
                created += 1
    if "losses" in SCENARIOS:
        plan += [("losses", "native", created, _row(LOSSES, i)) for i in range(4)]
        created += 1
    if "ulp" in SCENARIOS:  # two optimizers, one good step each
        plan += [("ulp", "native", created + i, _row(TWO, 0)) for i in range(2)]
        created += 2
    if "factor" in SCENARIOS:  # the wrapped plain SGD is not numbered: its wrapper is
        plan += [("factor", "wrapping", created, _row(KERAS_3_RULE, 0))]
        plan += [("factor", "factor", created + 1, _row(FIXED, i)) for i in range(3)]
        created += 2
    if "fit" in SCENARIOS:
        plan += [("fit", "fit", created, _row(FIT, i)) for i in range(4)]
    return plan


def _row(table: dict[str, list[Any]], i: int) -> dict[str, Any]:
    return {key: values[i] for key, values in table.items()}


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return str(a) == str(b)
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def _near(a: float, b: float) -> bool:
    """Summed in float32 (the trace) and in float64 (the reference), the few elements here."""
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return str(a) == str(b)
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def test_a_one_ulp_change_of_one_weight_is_a_divergence_at_that_step(runs):
    # The `ulp` scenario: the same step on weights [1, 0.25] and [1, 0.25 + 2**-25]. verify
    # must call it a divergence bit for bit (the float32 sum of squares cannot tell them apart:
    # the fingerprint of the bytes does), and --rtol must accept it.
    _main_ran(runs)
    pairs = zip(_steps(runs["main"]), _plan(), strict=True)
    one, other = (trace_file.Step.from_record(r) for r, (name, *_) in pairs if name == "ulp")
    assert [d.field for d in compare.differences(one, other)] == ["digest"], (one, other)
    assert compare.differences(one, other, rtol=1e-6) == ()
    assert compare.differences(one, one) == ()


def test_the_start_line_names_versions_argv_and_steps(runs):
    _main_ran(runs)
    start = runs["main"]["trace"][0]
    assert start["event"] == "start"
    assert set(start["versions"]) == {"python", "tensorflow", "keras", "tf.keras"}
    assert start["versions"]["tf.keras"] == BEHIND
    assert str(SCRIPT) in start["argv"]
    assert start["steps"] is None
    assert runs["stop"]["trace"][0]["steps"] == 1


def test_each_step_matches_the_rule_worked_out_by_hand(runs):
    _main_ran(runs)
    steps = _steps(runs["main"])
    plan = _plan()
    assert len(steps) == len(plan), [(s["optimizer"], s["class"]) for s in steps]
    counts: dict[int, int] = {}
    for record, (scenario, kind, index, row) in zip(steps, plan, strict=True):
        counts[index] = counts.get(index, 0) + 1
        label = f"{scenario}/{kind} step {counts[index]}: {record}"
        assert record["optimizer"] == index, label
        assert record["class"] == CLASSES[kind], label
        assert record["step"] == counts[index], label
        assert record["scale_before"] == row["before"], label
        assert record["scale_after"] == row["after"], label
        assert record["applied"] is row["applied"], label
        assert record["iterations"] == row["iterations"], label


def test_digests_and_losses_equal_the_variables_read_directly(runs):
    _main_ran(runs)
    steps = _steps(runs["main"])
    references = runs["references"]["steps"]
    assert len(steps) == len(references)
    for record, reference in zip(steps, references, strict=True):
        label = f"{reference['scenario']}/{reference['kind']}: {record}"
        digest = record["digest"]
        assert len(digest) == len(reference["digest"]), label
        for (name, squares, fingerprint), (_, squares_read, read) in zip(
            digest, reference["digest"], strict=True
        ):
            assert isinstance(name, str) and name, label
            assert fingerprint == read, label  # the bytes, exactly
            assert _near(squares, squares_read), label
        if reference["scenario"] == "fit":
            assert isinstance(record["loss"], float), label  # compile()'s loss, scaled by fit
            assert record["losses"] == [record["loss"]], label
        else:
            assert _same(record["loss"], reference["loss"]), label
            # Each loss scaled, in order; `losses`' scale_loss(1.0) and tf.constant(1.0): none.
            assert len(record["losses"]) == len(reference["losses"]), label
            for traced, read in zip(record["losses"], reference["losses"], strict=True):
                assert _same(traced, read), label
    assert [len(r["losses"]) for r in references if r["scenario"] == "losses"] == [2] * 4


def test_each_step_names_its_rate_its_gradients_and_where_its_optimizer_was_made(runs):
    # The learning rate each optimizer was made with (no schedule: every step reads it), one
    # gradient per variable and none None, and the line that made the optimizer: make()'s
    # constructor, the plain SGD given loss_scale_factor, or compile()'s wrapping.
    _main_ran(runs)
    seen: dict[tuple[str, str], int] = {}
    for record, (scenario, kind, *_) in zip(_steps(runs["main"]), _plan(), strict=True):
        label = f"{scenario}/{kind}: {record}"
        number = seen[scenario, kind] = seen.get((scenario, kind), -1) + 1
        rate = RATES.get(scenario, [0.1] * 6)[number]
        assert record["learning_rate"] == pytest.approx(rate, rel=1e-7), label
        assert (record["gradients"], record["none_gradients"]) == (
            len(record["digest"]), 0
        ), label  # fmt: skip
        path, _, line = record["created"].rpartition(":")
        assert pathlib.Path(path).resolve() == SCRIPT.resolve(), label
        made = SCRIPT_LINES[int(line) - 1]
        assert any(call in made for call in ("LossScaleOptimizer(", "SGD(", "compile(")), label
    # The files of the modules the run imported: the script's, none of TensorFlow's.
    *_, modules, end = runs["main"]["trace"]
    assert modules["event"] == "modules" and end["event"] == "exit", modules
    assert str(SCRIPT.resolve()) in modules["files"], modules
    assert not [f for f in modules["files"] if "site-packages" in f], modules


def test_the_trace_adds_few_operations_to_a_step(runs):
    # Each operation costs a step microseconds however small (issue 31: 1.12x a step). Per
    # variable: read, sum of squares, reshape, fingerprint; once: 7 on Keras 3, 8 on Keras 2.
    _main_ran(runs)
    counts = runs["references"]["operations"]
    added = {size: counts[f"traced {size}"] - counts[f"plain {size}"] for size in (1, 3)}
    per_variable = (added[3] - added[1]) // 2
    assert per_variable <= 4 and added[1] - per_variable <= 8, counts


def test_where_is_the_users_line(runs):
    _main_ran(runs)
    for record, (scenario, *_) in zip(_steps(runs["main"]), _plan(), strict=True):
        path, _, line = record["where"].rpartition(":")
        assert pathlib.Path(path).resolve() == SCRIPT.resolve(), record["where"]
        text = SCRIPT_LINES[int(line) - 1]
        call = "model.fit(" if scenario == "fit" else "optimizer.apply_gradients("
        assert call in text, (scenario, record["where"], text)


def test_a_normal_exit_ends_with_the_exit_line(runs):
    _main_ran(runs)
    assert runs["main"]["trace"][-1] == {"event": "exit", "status": 0}
    assert "done" in runs["main"]["stdout"]


def test_stops_once_every_optimizer_did_n_steps(runs):
    stop = runs["stop"]
    assert stop["status"] == 0, stop["stderr"][-3000:]
    assert "done" not in stop["stdout"]  # ended by the trace, before the script's end
    *steps, modules, last = stop["trace"][1:]
    assert last == {"event": "stopped", "reason": "steps", "steps": 1}
    assert modules["event"] == "modules" and str(SCRIPT.resolve()) in modules["files"], modules
    # The second optimizer steps first; the first one's step completes the set: no third step.
    assert [(s["optimizer"], s["step"]) for s in steps] == [(2, 1), (1, 1)]
    assert {s["class"] for s in steps} == {CLASSES["tf24"]}


def test_exit_status_and_uncaught_exception(runs):
    raises = runs["raises"]
    for traced, python in (("exits", "python"), ("module", "python-m")):
        run, reference = runs[traced], runs[python]
        assert run["status"] == reference["status"] == 3, run["stderr"]
        # sys.argv and sys.path as python sets them; the trace's variable not inherited.
        assert run["stdout"] == reference["stdout"]
        assert json.loads(run["stdout"])[2] is None
        assert [r["event"] for r in run["trace"]] == ["start", "modules", "exit"]
        assert run["trace"][-1] == {"event": "exit", "status": 3}
    assert raises["status"] == 1 and "ValueError: bad value" in raises["stderr"]
    assert raises["trace"][-1] == {"event": "error", "type": "ValueError", "message": "bad value"}


def test_bad_settings_are_named(monkeypatch, capsys, tmp_path):
    with pytest.raises(ValueError, match="steps must be a positive int"):
        trace.enable(tmp_path / "t.jsonl", steps=0)
    monkeypatch.setenv("COMPAT_LSO_TRACE", str(tmp_path / "t.jsonl"))
    monkeypatch.setenv("COMPAT_LSO_TRACE_STEPS", "ten")
    with pytest.raises(ValueError, match="COMPAT_LSO_TRACE_STEPS must be a positive whole"):
        trace.enable_from_environment()
    assert not trace.is_enabled()
    monkeypatch.delenv("COMPAT_LSO_TRACE")
    script = tmp_path / "s.py"
    script.write_text("")
    with pytest.raises(SystemExit):
        cli.main(["trace", str(script)])
    assert "pass -o FILE or set COMPAT_LSO_TRACE=FILE" in capsys.readouterr().err
    assert not (tmp_path / "t.jsonl").exists()


def test_off_nothing_is_imported_or_hooked():
    code = (
        "import sys, compat_lso; print(sorted(m for m in sys.modules if 'trace' in m)); "
        # What `python -m compat_lso run` imports before it runs the program, untraced.
        "import compat_lso.__main__; print(sorted(m for m in sys.modules if 'trace.' in m)); "
        "print([type(f).__module__ for f in sys.meta_path])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_environment()
    ).stdout.splitlines()
    assert "compat_lso.trace" not in out[0]
    assert "compat_lso.trace.hooks" not in out[1] and "compat_lso.trace.measure" not in out[1]
    assert "compat_lso.trace.hooks" not in out[2]
