"""The differential judge on traces written by hand (no TensorFlow): the tolerance, where the
first difference is, which findings account for it, and how a crash's line maps back."""

from __future__ import annotations

import math

from tests.differential.judge import CROSS_RELEASE, first_difference, judge, original_lines


def step(loss, weights, scale=None):
    return {"loss": loss, "weights": weights, "scale": scale}


REFERENCE = [step(None, [1.0, 2.0]), step(4.0, [0.5, 1.5]), step(math.inf, [0.5, 1.5])]
REFERENCE += [step(3.0, [0.25, 1.0])]


def record(trace, findings=(), error=None, source="a\nb\nc\n", text="a\nb\nc\n"):
    run = {"error": error, "lines": [2]} if error else {"trace": trace}
    migration = {"text": text, "findings": list(findings), "run": run}
    return {"source": source, "reference": {"trace": REFERENCE}, "targets": {"keras3": migration}}


def finding(code, line=1, fixed=True, note=False):
    return {"code": code, "line": line, "fixed": fixed, "note": note, "message": ""}


def test_float16_rounding_between_releases_is_equal_and_more_is_not():
    moved = [dict(s, weights=[w * (1 + 2**-9) for w in s["weights"]]) for s in REFERENCE]
    assert first_difference(REFERENCE, moved, CROSS_RELEASE) is None
    moved[3] = step(3.0, [0.25, 1.1])
    assert first_difference(REFERENCE, moved, CROSS_RELEASE) == (3, "weight 1: 1.0 != 1.1")


def test_a_difference_with_no_finding_is_silent_and_names_the_rewrites():
    other = [*REFERENCE[:3], step(3.0, [0.3, 1.0])]
    assert judge(record(other), "keras3", False)["verdict"] == "silent"
    verdict = judge(record(other, [finding("LSO011")]), "keras3", False)
    assert verdict["verdict"] == "silent" and "[*] LSO011" in verdict["detail"]


def test_keras3s_rule_accounts_only_from_the_first_skipped_step():
    noted = [finding("LSO022", note=True)]
    late = [*REFERENCE[:3], step(3.0, [0.3, 1.0])]  # step 3, after the skipped step 2
    assert judge(record(late, noted), "keras3", False)["verdict"] == "noted"
    early = [REFERENCE[0], step(4.0, [0.6, 1.5]), *REFERENCE[2:]]  # step 1: before any skip
    assert judge(record(early, noted), "keras3", False)["verdict"] == "silent"


def test_a_crash_is_manual_only_at_a_reported_line_or_a_reported_construction():
    crash = "AttributeError: no minimize"
    assert judge(record(None, error=crash), "keras3", False)["verdict"] == "crash"
    elsewhere = [finding("LSO011", line=3, fixed=False)]
    assert judge(record(None, elsewhere, error=crash), "keras3", False)["verdict"] == "crash"
    there = [finding("LSO011", line=2, fixed=False)]
    assert judge(record(None, there, error=crash), "keras3", False)["verdict"] == "manual"
    built = [finding("LSO015", line=3, fixed=False)]
    assert judge(record(None, built, error=crash), "keras3", False)["verdict"] == "manual"


def test_migrated_lines_map_back_to_the_program():
    source = "a\nb\nc\nd\n"
    migrated = "import x\na\nB\nc\nd\n"  # a line added on top, `b` rewritten
    assert original_lines(source, migrated, [3, 4, 5]) == [2, 3, 4]
    assert original_lines("a\nb\nc\n", "a\nb1\nb2\nc\n", [3]) == [2]


def test_a_difference_the_control_shares_is_the_releases():
    other = [*REFERENCE[:3], step(3.0, [0.3, 1.0])]
    with_control = dict(record(other), control={"trace": other})
    assert judge(with_control, "keras3", False)["verdict"] == "release"
    moved = [*REFERENCE[:3], step(3.0, [0.3, 1.01])]
    assert judge(dict(record(other), control={"trace": moved}), "keras3", False)["verdict"] == (
        "silent"
    )
