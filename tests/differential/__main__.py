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
import sys
import time
from typing import Any

from tests.differential.generator import programs
from tests.differential.judge import DEFECTS, judge
from tests.differential.runner import TARGET_TF, TARGETS, Worker, run_program
from tests.differential.shrink import shrink

OLD = "COMPAT_LSO_TF215_PYTHON"
NEW = "COMPAT_LSO_TF221_PYTHON"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--old-python", default=os.environ.get(OLD, ""), help=f"TF 2.15 (${OLD})")
    parser.add_argument("--new-python", default=os.environ.get(NEW, sys.executable))
    parser.add_argument("--json", help="write every program's record and verdicts here")
    parser.add_argument("--no-shrink", action="store_true")
    args = parser.parse_args(argv)
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
                    found = {"program": number, "target": target, **verdict, "axes": axes.name()}
                    if not args.no_shrink:
                        small, small_verdict = shrink(axes, target, verdict, workers)
                        found["shrunk"] = small.name()
                        found["shrunk_detail"] = small_verdict["detail"]
                    defects.append(found)
                    print(f"  #{number} {target}: {verdict['verdict']}: {verdict['detail']}")
                    print(f"      {axes.name()} -> {found.get('shrunk', '(not shrunk)')}")
            records.append(record)
    finally:
        for worker in workers.values():
            worker.close()
    seconds = time.monotonic() - started
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    print(f"differential: {args.count} programs x {len(targets)} targets in {seconds:.0f} s: "
          f"{summary}; {len(defects)} defect(s)")  # fmt: skip
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"seed": args.seed, "count": args.count, "seconds": round(seconds),
                       "counts": counts, "defects": defects, "programs": records}, out)  # fmt: skip
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
