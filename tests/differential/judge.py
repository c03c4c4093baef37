"""The verdict on one migrated program: its numbers against the reference's, and the codemod's
findings that account for a difference.

- equal: every step's loss, weights and read scale within the tolerance (bit for bit on the
  reference's own TensorFlow, up to float16's rounding between TF 2.15 and TF 2.21 otherwise);
- manual: it differs, and the codemod reported manual work (the user must act first); or it
  crashes at a line (of the program's frames in the traceback) the codemod reported, or
  anywhere once the loss scale optimizer's construction is reported (CONSTRUCTION);
- release: it differs from TF 2.15, but the control (the program as written, on the target's
  TensorFlow through compat_lso.install(): TF 2.4's meaning there) gives its very numbers: the
  TensorFlow release differs (float16 overflows in one and not in the other), not the migration;
- noted: it differs, and a note at the program's loss scale optimizer accounts for it (LSO022,
  Keras 3's dynamic rule, only from the reference's first skipped step on: "with no skipped step
  nothing differs", as its --explain says);
- defects: `codemod-error` (the codemod raised), `crash` (the migrated program raised and no
  finding asked for manual work at a line of its traceback, mapped back to the program's),
  `silent` (it differs and no finding says why; `[*]` rewrites
  among the findings make it a rewrite that changed the numbers).
- invalid: the reference itself did not run: a generator bug, not the codemod's.
"""

from __future__ import annotations

import difflib
import math
from typing import Any

# Between releases: float16 rounds apart from the first step (verify's test measured 5e-5 to 8e-4
# relative over 12 steps); on one TensorFlow a rewrite that keeps the meaning is exact up to the
# order of float32 operations (a written-out unscaling multiplies by 1/scale, a power of two).
CROSS_RELEASE = (2.0**-6, 2.0**-10)  # (relative, absolute)
SAME_RELEASE = (1e-6, 1e-7)
DEFECTS = ("codemod-error", "crash", "silent")
# Manual work on the loss scale optimizer's construction (or its class): until the user has done
# it, the optimizer is not what the code around it expects, so a crash there is accounted for
# wherever it happens (Keras 3's class given `initial_scale=None` fails in scale_loss).
CONSTRUCTION = frozenset({"LSO001", "LSO003", "LSO006", "LSO015", "LSO016"})


def _close(a: float | None, b: float | None, tolerance: tuple[float, float]) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    relative, absolute = tolerance
    return abs(a - b) <= absolute + relative * max(abs(a), abs(b))


def first_difference(
    reference: list[dict[str, Any]], other: list[dict[str, Any]], tolerance: tuple[float, float]
) -> tuple[int, str] | None:
    """(step, what) of the first entry that differs; step 0 is the initial weights."""
    for step, (a, b) in enumerate(zip(reference, other, strict=False)):
        for key in ("loss", "scale"):
            if not _close(a.get(key), b.get(key), tolerance):
                return step, f"{key} {a.get(key)!r} != {b.get(key)!r}"
        if len(a["weights"]) != len(b["weights"]):
            return step, "a different number of weights"
        for i, (u, v) in enumerate(zip(a["weights"], b["weights"], strict=True)):
            if not _close(u, v, tolerance):
                return step, f"weight {i}: {u!r} != {v!r}"
    if len(reference) != len(other):
        return min(len(reference), len(other)), f"{len(reference)} != {len(other)} steps"
    return None


def first_skipped(reference: list[dict[str, Any]]) -> int | None:
    """The first step whose update was skipped (weights unchanged) or whose loss is not finite."""
    for step in range(1, len(reference)):
        loss = reference[step]["loss"]
        if (loss is not None and not math.isfinite(loss)) or (
            reference[step]["weights"] == reference[step - 1]["weights"]
        ):
            return step
    return None


def original_lines(source: str, migrated: str, lines: list[int]) -> list[int]:
    """The lines of `source` that the migrated text's `lines` came from: itself where unchanged
    or rewritten line for line, every line of a block rewritten into another number of lines,
    and the lines either side of an added one."""
    matcher = difflib.SequenceMatcher(None, source.splitlines(), migrated.splitlines(), False)
    found: set[int] = set()
    for line in lines:
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if not j1 < line <= j2:
                continue  # (a deleted block, j1 == j2, holds no migrated line)
            if tag == "insert":
                found.update({i1, i1 + 1})
            elif i2 - i1 == j2 - j1:
                found.add(i1 + line - j1)
            else:
                found.update(range(i1 + 1, i2 + 1))
            break
    return sorted(found)


def judge(record: dict[str, Any], target: str, same_release: bool) -> dict[str, Any]:
    migration = record["targets"][target]
    reference = record["reference"]
    if "error" in reference:
        return {"verdict": "invalid", "detail": f"reference: {reference['error']}"}
    if "error" in migration:
        return {"verdict": "codemod-error", "detail": migration["error"]}
    findings = migration["findings"]
    manual = sorted({f["code"] for f in findings if not f["fixed"]})
    notes = sorted({f["code"] for f in findings if f["note"]})
    rewrites = sorted({f["code"] for f in findings if f["fixed"] and not f["note"]})
    run = migration.get("run")
    if run is None:
        return {"verdict": "not-run", "detail": "no TensorFlow for this target here"}
    if "error" in run:
        lines = original_lines(record["source"], migration["text"], run.get("lines") or [])
        at_crash = sorted({f["code"] for f in findings if not f["fixed"] and f["line"] in lines})
        if at_crash:
            return {"verdict": "manual", "detail": run["error"], "codes": at_crash}
        built = sorted(set(manual) & CONSTRUCTION)
        if built:  # the optimizer itself is left to the user: what uses it may fail anywhere
            return {
                "verdict": "manual",
                "detail": run["error"] + " (its optimizer)",
                "codes": built,
            }
        elsewhere = f"; manual work reported elsewhere: {', '.join(manual)}" if manual else ""
        return {
            "verdict": "crash",
            "detail": f"{run['error']} (line {', '.join(map(str, lines))}){elsewhere}",
            "codes": rewrites + notes + manual,
        }
    tolerance = SAME_RELEASE if same_release else CROSS_RELEASE
    difference = first_difference(reference["trace"], run["trace"], tolerance)
    if difference is None:
        return {"verdict": "equal"}
    step, what = difference
    detail = f"step {step}: {what}"
    if manual:
        return {"verdict": "manual", "detail": detail, "codes": manual}
    control = record.get("control", {}).get("trace")
    if (
        not same_release
        and control
        and first_difference(control, run["trace"], SAME_RELEASE) is None
    ):
        return {"verdict": "release", "detail": detail + "; the control gives the same numbers"}
    skipped = first_skipped(reference["trace"])
    accounted = [c for c in notes if c != "LSO022" or (skipped is not None and step >= skipped)]
    if accounted:
        return {"verdict": "noted", "detail": detail, "codes": accounted}
    return {
        "verdict": "silent",
        "detail": detail + (f"; [*] {', '.join(rewrites)}" if rewrites else "; no finding"),
        "codes": rewrites + notes,
    }
