"""Shrink a defect to the program with the most axes at their simplest option that still shows
it (the same verdict on the same target), one axis at a time, until no axis moves."""

from __future__ import annotations

import dataclasses
from typing import Any

from tests.differential.generator import AXES, SIMPLEST, Axes
from tests.differential.judge import judge
from tests.differential.runner import TARGET_TF, Worker, run_program


def shrink(
    axes: Axes, target: str, verdict: dict[str, Any], workers: dict[str, Worker]
) -> tuple[Axes, dict[str, Any]]:
    moved = True
    while moved:
        moved = False
        for axis in AXES:
            if getattr(axes, axis) == SIMPLEST[axis]:
                continue
            candidate = dataclasses.replace(axes, **{axis: SIMPLEST[axis]})  # type: ignore[arg-type]
            if not candidate.valid():
                continue
            record = run_program(candidate, workers, [target])
            again = judge(record, target, same_release=TARGET_TF[target] == "old")
            if again["verdict"] == verdict["verdict"]:
                axes, verdict, moved = candidate, again, True
    return axes, verdict
