"""The name walk (codemods/meaning/scopes.py) against the standard library's own `ast.walk`: every
name read, call and attribute in a module is recorded, once, in source pre-order of its statement.

The walk dispatches on node types by hand (a table of the expressions whose parts are all read);
an expression form it forgot would hide the old names inside it from every rule and from the sweep.
"""

import ast
import asyncio
import dataclasses
import inspect
import json
from pathlib import Path

import pytest

from codemods.meaning import scopes
from codemods.meaning.scopes import Walk

# Every expression form Python 3.11 has, each holding a read name, a call and an attribute where
# its grammar allows one.
EVERY_FORM = """\
import tensorflow as tf
a = b.c and d.e() or not f.g
h = i.j + k.l(-m.n)
o = p.q if r.s() else t.u
v = {w.x: y.z(), **aa.bb}
cc = {dd.ee, ff.gg()}
async def hh():
    await ii.jj()
    async for kk in ll.mm():
        pass
def nn():
    yield oo.pp
    yield from qq.rr()
ss = tt.uu < vv.ww() <= xx.yy
zz = f"{ab.cd!r:>{ef.gh()}}"
ij = kl.mn[op.qr():st.uv:wx.yz]
print(*ab.ef, **gh.ij)
[kl.mn, *op.qr] = st.uv
(wx, yz) = (ab.cd, ef.gh())
lam = lambda x=ij.kl: x.mn(op.qr)
comp = [s.t for s in u.v() if s.w]
gen = {k: k.a for k in b.c}
(walrus := tf.keras.mixed_precision.experimental.LossScaleOptimizer(d.e, "dynamic"))
match g.h:
    case i.j: k.l()
    case [m.n, *rest] if o.p(): pass
    case {"q": r} if r.s: pass
    case tf.T(u=v): v.w()
x: y.z = ab.cd
del ef.gh[ij.kl()]
with mn.op() as qr.st:
    raise uv.wx from yz.ab
"""


def _reference(tree: ast.Module) -> tuple[list[int], list[int], list[int]]:
    """(name reads, calls, attributes) as ast.walk finds them, by node identity."""
    nodes = list(ast.walk(tree))
    return (
        sorted(id(n) for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
        sorted(id(n) for n in nodes if isinstance(n, ast.Call)),
        sorted(id(n) for n in nodes if isinstance(n, ast.Attribute)),
    )


def _modules() -> list[str]:
    # This package's own walk and a few standard library modules with every statement and
    # expression form between them (async code, match statements, dataclass machinery).
    return [EVERY_FORM] + [
        Path(inspect.getfile(module)).read_text(encoding="utf-8")
        for module in (scopes, ast, asyncio.tasks, dataclasses, json.decoder)
    ]


@pytest.mark.parametrize("index", range(len(_modules())))
def test_the_walk_records_every_read_call_and_attribute_once(index):
    tree = ast.parse(_modules()[index])
    walk = Walk(tree)
    loads, calls, attributes = _reference(tree)
    assert sorted(id(n) for n in walk.loads) == loads
    assert sorted(id(n) for n in walk.calls) == calls
    assert sorted(id(n) for n in walk.attributes) == attributes
    assert set(walk.scope_of_load) == set(loads)


def test_the_walk_records_calls_in_source_order_statement_by_statement():
    tree = ast.parse(EVERY_FORM)
    walk = Walk(tree)
    positions = [(call.lineno, call.col_offset) for call in walk.calls]
    # Within a statement a call's callee and arguments come after it (pre-order); across
    # statements, in the order they appear.
    assert positions == sorted(positions)
    assert len(positions) == sum(isinstance(n, ast.Call) for n in ast.walk(tree))


def test_the_table_lists_each_expression_form_with_every_field_that_can_hold_one():
    """_READ_CHILDREN names, for each expression it lists, every field but contexts and
    operators that is not a plain value (a name, a constant, a conversion flag)."""
    plain = {"value": ast.Constant, "kind": ast.Constant, "conversion": ast.FormattedValue}
    for kind, fields in scopes._READ_CHILDREN.items():
        expected = tuple(
            f for f in kind._fields if f not in {"ctx", "op", "ops"} and plain.get(f) is not kind
        )
        assert fields == expected, kind.__name__
    by_hand = {ast.Name, ast.Attribute, ast.Call, ast.Lambda, ast.NamedExpr}
    by_hand |= {ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp}
    # The node types a parse produces (other libraries' subclasses, gast's, are not among them).
    expressions = {kind for kind in ast.expr.__subclasses__() if kind.__module__ == "ast"}
    missing = expressions - by_hand - set(scopes._READ_CHILDREN)
    assert not missing, (
        f"walked only by the generic fallback: {sorted(k.__name__ for k in missing)}"
    )
