"""Every import style x every loss_scale form x every target: parses, is stable, leaves no old name.

The rule modules test each case by name; this one makes sure the styles and forms compose.
"""

import ast

import pytest

from codemods.apply.engine import migrate

# (imports, how the experimental LossScaleOptimizer is spelled, how DynamicLossScale is spelled)
STYLES = {
    "tf": (
        "import tensorflow as tf\n",
        "tf.keras.mixed_precision.experimental.LossScaleOptimizer",
        "tf.mixed_precision.experimental.DynamicLossScale",
    ),
    "keras-from-tf": (
        "import tensorflow as tf\nfrom tensorflow import keras\n",
        "keras.mixed_precision.experimental.LossScaleOptimizer",
        "tf.train.experimental.DynamicLossScale",
    ),
    "mp-alias": (
        "import tensorflow as tf\nfrom tensorflow.keras import mixed_precision as mp\n",
        "mp.experimental.LossScaleOptimizer",
        "tf.compat.v1.mixed_precision.DynamicLossScale",
    ),
    "experimental-alias": (
        "import tensorflow as tf\n"
        "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n",
        "mixed_precision.LossScaleOptimizer",
        "tf.mixed_precision.experimental.DynamicLossScale",
    ),
    "names": (
        "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer\n"
        "from tensorflow.mixed_precision.experimental import DynamicLossScale\n",
        "LossScaleOptimizer",
        "DynamicLossScale",
    ),
    "variable": (
        "import tensorflow as tf\nexp = tf.keras.mixed_precision.experimental\n",
        "exp.LossScaleOptimizer",
        "tf.mixed_precision.experimental.DynamicLossScale",
    ),
    "standalone-keras": (
        "import keras\nimport tensorflow as tf\n",
        "keras.mixed_precision.experimental.LossScaleOptimizer",
        "tf.mixed_precision.experimental.DynamicLossScale",
    ),
}
FORMS = {
    "dynamic": ("{lso}(opt, 'dynamic')", {}),
    "fixed": ("{lso}(opt, loss_scale=64)", {"dynamic": False, "initial_scale": 64}),
    "dynamic-object": (
        "{lso}(optimizer=opt, loss_scale={dls}(initial_loss_scale=1024, increment_period=10))",
        {"initial_scale": 1024, "dynamic_growth_steps": 10},
    ),
    "runtime": ("{lso}(opt, scale)", None),
}


def keywords(call: ast.Call) -> dict:
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg != "inner_optimizer"}


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("style", STYLES)
def test_combination(style, form, target):
    imports, lso, dls = STYLES[style]
    template, expected = FORMS[form]
    before = imports + "opt = " + template.format(lso=lso, dls=dls) + "\n"
    result = migrate(before, target)
    tree = ast.parse(result.text)
    assert migrate(result.text, target).text == result.text
    if form == "runtime" and target == "keras2":  # converted where the code runs (LSO001)
        converted = 'dynamic=scale == "dynamic", initial_scale=None if scale == "dynamic" else '
        converted += "scale"
        assert converted in result.text and "experimental" not in result.text
        return
    rewritable = expected is not None and not (
        target == "keras3" and expected.get("dynamic") is False
    )
    if not rewritable:
        if target == "shim":  # the shim takes anything over, on its experimental class
            assert "compat_lso.experimental.LossScaleOptimizer(opt, scale)" in result.text
            assert "mixed_precision.experimental" not in result.text
        else:
            written = "opt = " + template.format(lso=lso, dls=dls) + "\n"
            assert result.text.endswith(written), "a reported call is left exactly as written"
            # An import or alias of the old name stays for that call, and fails on import: the
            # sweep reports its line too (LSO101).
            kept = ["LSO101"] if "experimental" in imports else []
            assert [f.code for f in result.findings if not f.fixed] == [*kept, "LSO001"]
        return
    assert "experimental" not in result.text, result.text
    [call] = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, (ast.Name, ast.Attribute))
        and ast.unparse(n.func).endswith("LossScaleOptimizer")
    ]
    assert keywords(call) == expected
    if target == "shim":
        assert ast.unparse(call.func) == "compat_lso.LossScaleOptimizer"
    # No import is left unused by the rewrite, and every name read is bound.
    unused_before, _ = bound_and_unused(ast.parse(before))
    unused_after, unbound_after = bound_and_unused(tree)
    assert unused_after <= unused_before, f"unused import left: {unused_after - unused_before}"
    assert not unbound_after, f"missing import: {unbound_after}"


def bound_and_unused(tree: ast.Module) -> tuple[set[str], set[str]]:
    bound = {
        a.asname or a.name.split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    } | {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return bound - used - {"opt"}, used - bound - {"opt"}
