"""`python -m tests.differential --count N --seed S`: N programs from seed S, each migrated on
every target and trained on TF 2.15 (the reference) and the target's TensorFlow; prints a line
per defect (shrunk to the fewest axes off their simplest option), a summary, and writes the whole
run as JSON with --json. Exit 1 when a defect was found. `nox -s differential -- ...` runs it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import time
from typing import Any

from tests.differential.generator import Axes, programs
from tests.differential.judge import DEFECTS, judge
from tests.differential.runner import TARGET_TF, TARGETS, Worker, run_program
from tests.differential.shrink import shrink

OLD = "COMPAT_LSO_TF215_PYTHON"
NEW = "COMPAT_LSO_TF221_PYTHON"


def defect_class(target: str, verdict: dict[str, Any]) -> str:
    """What makes two defects one: the target, the verdict and what went wrong, less the line and
    the numbers ("crash: AttributeError: ... has no attribute 'minimize'")."""
    detail = re.sub(r"\(line [^)]*\).*|step \d+: |(?<![\w.])-?\d[\d.e+-]*", "", verdict["detail"])
    return f"{target}: {verdict['verdict']}: {detail.strip()}"


def _defect(
    number: int,
    axes: Axes,
    target: str,
    verdict: dict[str, Any],
    workers: dict[str, Worker],
    shrunk: dict[str, str] | None,
) -> dict[str, Any]:
    """The defect's record, shrunk the first time its class is seen (`shrunk`: each class seen,
    and its shrunk program; None: no shrinking)."""
    found = {"program": number, "target": target, **verdict, "axes": axes.name()}
    found["class"] = defect_class(target, verdict)
    print(f"  #{number} {target}: {verdict['verdict']}: {verdict['detail']}", flush=True)
    if shrunk is not None and found["class"] in shrunk:
        found["shrunk"] = shrunk[found["class"]]
    elif shrunk is not None:
        small, small_verdict = shrink(axes, target, verdict, workers)
        found["shrunk"] = small.name()
        found["shrunk_detail"] = small_verdict["detail"]
        shrunk[found["class"]] = found["shrunk"]
    print(f"      {axes.name()} -> {found.get('shrunk', '(not shrunk)')}", flush=True)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--old-python", default=os.environ.get(OLD, ""), help=f"TF 2.15 (${OLD})")
    parser.add_argument("--new-python", default=os.environ.get(NEW, sys.executable))
    parser.add_argument("--json", help="write every program's record and verdicts here")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--rejudge", help="judge a --json file's runs again (no TensorFlow)")
    args = parser.parse_args(argv)
    if args.rejudge:
        return rejudge(args.rejudge)
    if not args.old_python:
        parser.error(f"name TF 2.15's interpreter: --old-python or ${OLD}")
    targets = [t for t in args.targets.split(",") if t]
    started = time.monotonic()
    workers = {"old": Worker(args.old_python)}
    if any(TARGET_TF[t] == "new" for t in targets):
        workers["new"] = Worker(args.new_python)
    print(f"differential: seed {args.seed}, {args.count} programs, targets {', '.join(targets)};")
    print(f"  TF {workers['old'].version} (reference), " + ", ".join(
        f"{t} on TF {workers[TARGET_TF[t]].version}" for t in targets))  # fmt: skip
    counts: collections.Counter[str] = collections.Counter()
    defects: list[dict[str, Any]] = []
    shrunk: dict[str, str] | None = None if args.no_shrink else {}
    records = []
    try:
        for number, axes in enumerate(programs(args.seed, args.count), 1):
            record = run_program(axes, workers, targets)
            record["verdicts"] = {}
            for target in targets:
                verdict = judge(record, target, same_release=TARGET_TF[target] == "old")
                record["verdicts"][target] = verdict
                counts[verdict["verdict"]] += 1
                if verdict["verdict"] in DEFECTS:
                    defects.append(_defect(number, axes, target, verdict, workers, shrunk))
            records.append(record)
            if number % 25 == 0:
                print(f"  {number} programs, {time.monotonic() - started:.0f} s", flush=True)
    finally:
        for worker in workers.values():
            worker.close()
    seconds = time.monotonic() - started
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    print(f"differential: {args.count} programs x {len(targets)} targets in {seconds:.0f} s: "
          f"{summary}; {len(defects)} defect(s)")  # fmt: skip
    classes = collections.Counter(d["class"] for d in defects)
    for name, n in classes.most_common():
        print(
            f"  {n} x {name}" + (f" (shrunk: {shrunk[name]})" if shrunk and name in shrunk else "")
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"seed": args.seed, "count": args.count, "seconds": round(seconds),
                       "counts": counts, "defects": defects, "programs": records}, out)  # fmt: skip
    return 1 if defects else 0


def rejudge(path: str) -> int:
    """The verdicts of a recorded run by today's judge: its counts and defect classes."""
    with open(path, encoding="utf-8") as recorded:
        run = json.load(recorded)
    counts: collections.Counter[str] = collections.Counter()
    classes: collections.Counter[str] = collections.Counter()
    for number, record in enumerate(run["programs"], 1):
        for target in record["targets"]:
            verdict = judge(record, target, same_release=TARGET_TF[target] == "old")
            counts[verdict["verdict"]] += 1
            if verdict["verdict"] in DEFECTS:
                classes[defect_class(target, verdict)] += 1
                print(f"  #{number} {target}: {verdict['detail']}  [{record['name']}]")
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    print(f"rejudged: seed {run['seed']}, {run['count']} programs: {summary}")
    for name, n in classes.most_common():
        print(f"  {n} x {name}")
    return 1 if classes else 0


if __name__ == "__main__":
    sys.exit(main())
