"""The sweep is driven by the table: each entry of its block is flagged on its target and reaches
the sweep through the prefilter, and every old name the table knows is handled by a rule (the
sweep's safety net, LSO100, stays silent for them)."""

from __future__ import annotations

import pytest

from codemods import guarantee, table
from codemods.apply.engine import migrate
from codemods.io.prefilter import may_contain_targets
from codemods.sweep import findings as sweep_findings
from codemods.table import Target

ENTRIES = [
    pytest.param(target, entry, id=f"{target}-{type(entry).__name__}-{index}")
    for target in table.TARGETS
    for index, entry in enumerate(
        (
            *table.REMOVED_NAMES[target],
            *table.REMOVED_MEMBERS[target],
            *table.UNSUPPORTED_CALLS[target],
        )
    )
]


@pytest.mark.parametrize(("target", "entry"), ENTRIES)
def test_each_entry_is_flagged_on_its_target(target: Target, entry):
    assert may_contain_targets(entry.example.encode(), target), "the prefilter must let it in"
    found = sweep_findings.flags(entry.example, target)
    assert found, f"the sweep does not flag {entry.example!r} on {target}"
    last_line = entry.example.count("\n")
    assert found[-1].line == last_line
    # ... and after a run it is rewritten or reported at its own line.
    assert guarantee.unreported(entry.example, target) == []
    result = migrate(entry.example, target)
    manual = {f.line for f in result.findings if not f.fixed}
    assert last_line in manual or result.text != entry.example


def test_the_prefilter_has_every_word_of_the_sweep():
    for target in table.TARGETS:
        for call in table.UNSUPPORTED_CALLS[target]:
            assert set(call.words) <= set(table.PREFILTER_ALONE[target])


def old_names() -> list[str]:
    """Every old name the table knows, as a qualified name."""
    names = [
        f"{module}.{member}"
        for module in table.KERAS_EXPERIMENTAL
        for member in (*table.KERAS_MEMBERS, *table.LOSS_SCALE_CLASSES, "get_layer_policy")
    ]
    names += [f"{m}.{member}" for m in table.TF_EXPERIMENTAL for member in table.TF_MEMBERS]
    names += [f"{table.PRIVATE_KERAS_EXPERIMENTAL}.loss_scale_optimizer.LossScaleOptimizer"]
    return names


def spelled(qualified: str) -> tuple[str, str]:
    """An import and the expression that spells `qualified` through it."""
    root, _, rest = qualified.partition(".")
    if root == "tensorflow":
        return "import tensorflow as tf\n", f"tf.{rest}"
    return f"import {root}\n", qualified


@pytest.mark.parametrize("target", table.TARGETS)
@pytest.mark.parametrize("qualified", old_names())
@pytest.mark.parametrize("use", ["call", "value", "isinstance", "base"])
def test_no_rule_forgets_an_old_name_of_the_table(qualified, target: Target, use):
    imports, name = spelled(qualified)
    body = {
        "call": f"x = {name}(opt, 'dynamic')\n",
        "value": f"x = [{name}]\n",
        "isinstance": f"ok = isinstance(x, {name})\n",
        "base": f"class Mine({name}):\n    pass\n",
    }[use]
    result = migrate(imports + body, target)
    gaps = [f for f in result.findings if f.code == "LSO100"]
    assert not gaps, gaps
    assert guarantee.unreported(imports + body, target) == []


def test_a_private_name_read_as_its_public_one_keeps_its_own_last_part():
    """The rules test an attribute's own name before resolving it (`.LossScaleOptimizer` in
    rules/_tf24.py): that holds only while no public name the table gives a private one ends
    otherwise."""
    renamed = {
        private: public
        for private, public in table.PRIVATE_PUBLIC.items()
        if private.rpartition(".")[2] != public.rpartition(".")[2]
    }
    assert table.PRIVATE_PUBLIC
    assert renamed == {}
