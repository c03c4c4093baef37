"""CI's fixed sample of differential programs, and its reference numbers.

SAMPLE covers every option of every axis at least once in 12 programs. The reference's traces
(TF 2.15, the programs as written) live in sample_reference.json, numbers only, so that
tests(tf221) compares Keras 3's and the shim's runs without TF 2.15; tests(tf215) runs the
reference again and checks the file. Regenerate it after changing the generator or the sample:

    PYTHONPATH=. /tmp/ci1/.nox/tests-tf215/bin/python -m tests.differential.sample
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

from tests.differential.generator import Axes, render

REFERENCE = pathlib.Path(__file__).with_name("sample_reference.json")
SAMPLE = [
    Axes("tf24", "class", "tape", "dynamic", "SGD", "yes", "yes", data_seed=1),
    Axes("tf24", "alias", "none", "fixed", "Adam", "no", "no", data_seed=2),
    Axes("tf24", "factory", "minimize", "dynamic", "legacy", "yes", "yes", data_seed=4),
    Axes("tf24", "attribute", "compile", "fixed", "schedule", "no", "no", data_seed=5),
    Axes("tf24", "class", "wrap", "dynamic", "Adam", "yes", "no", data_seed=7),
    Axes("tf24", "config", "accumulation", "runtime", "SGD", "no", "yes", data_seed=8),
    Axes("experimental", "subclass", "distribute", "dynamic", "SGD", "yes", "no", data_seed=10),
    Axes("tf24", "class", "tape", "runtime", "schedule", "yes", "no", data_seed=11),
    Axes("experimental", "class", "tape", "dynamic", "Adam", "yes", "yes", data_seed=13),
    Axes("experimental", "alias", "compile", "policy", "SGD", "yes", "no", data_seed=14),
    Axes("experimental", "factory", "accumulation", "fixed", "SGD", "no", "no", data_seed=16),
    Axes("experimental", "config", "minimize", "runtime", "schedule", "yes", "yes", data_seed=17),
]

# The programs test_sample.py breaks the right migration of, to see the harness catch it.
FIXED = Axes("experimental", "class", "tape", "fixed", "SGD", "yes", "no", data_seed=1)
DYNAMIC = Axes("tf24", "class", "tape", "dynamic", "SGD", "yes", "no", data_seed=1)


def load() -> dict[str, Any]:
    stored: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return stored


def main() -> None:
    """Run the sample's references on this interpreter's TensorFlow (TF 2.15) and store them."""
    from tests.differential.runner import Worker

    worker = Worker(sys.executable)
    if not worker.version.startswith("2.15."):
        sys.exit(f"the reference is TF 2.15's; this is TF {worker.version}")
    try:
        traces = {}
        for axes in [*SAMPLE, FIXED, DYNAMIC]:
            traces[axes.name()] = worker.run(render(axes), install=axes.era == "experimental")
    finally:
        worker.close()
    text = json.dumps({"tensorflow": worker.version, "references": traces}, indent=0)
    REFERENCE.write_text(text + "\n", encoding="utf-8")
    print(f"{REFERENCE.name}: {len(traces)} references on TF {worker.version}")


if __name__ == "__main__":
    main()
