"""End to end: the bundled TF 2.3-era project, migrated by the codemod, trains exactly as before.

`examples/legacy_project/train.py` is the unmodified old-API script. It runs on
`compat_lso.install()` for the reference; its migrations (to the shim everywhere, to Keras 2 where
tf.keras is Keras 2) run with nothing installed and must give the same loss and loss-scale history,
overflow step included. So must the intermediate form on the shim's experimental class (LSO013).
Besides being compared with each other, the original run and every migrated run are compared
with an independent reference: the same training worked out in NumPy (examples/reference.py).
"""

import ast
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="trains the example project on TensorFlow")

import compat_lso  # noqa: E402
from codemods.apply.engine import migrate  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPT = EXAMPLES / "legacy_project" / "train.py"
ORIGINAL_IMPORT = "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
SHIM_EXPERIMENTAL_IMPORT = "from compat_lso import experimental as mixed_precision\n"
KERAS_2 = hasattr(tf.keras.mixed_precision.LossScaleOptimizer, "get_scaled_loss")


def _load_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference", EXAMPLES / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BY_HAND = _load_reference()


def run(source: str) -> list[float]:
    """Train the script's model; the loss and loss-scale history, flattened.

    Checked on the way against the NumPy reference, from the same initial weights and batches.
    """
    namespace: dict[str, Any] = {"__name__": "legacy_train"}
    exec(compile(source, str(SCRIPT), "exec"), namespace)
    batches = namespace["make_batches"]()
    expected = BY_HAND.train(batches, namespace["build_model"]().get_weights())
    model, _, history = namespace["train"](batches)
    assert not BY_HAND.mismatches(history, model.get_weights(), expected)
    return [float(value) for step in history for value in step]


def test_the_reference_has_the_loss_scale_worked_out_by_hand():
    # initial 2**10; doubled after steps 0-3 and 7-10 (4 finite steps each); step 6 overflows.
    batches = [(np.ones((4, 8), "float32"), np.ones((4, 1), "float32")) for _ in range(12)]
    batches[6][0][0, 0] = 1e30  # inf in float16
    weights = [np.ones((8, 16)), np.ones(16), np.ones((16, 1)), np.ones(1)]
    history, _ = BY_HAND.train(batches, weights)
    assert [scale for _, scale in history] == [1024] * 3 + [2048] * 3 + [1024] * 4 + [2048] * 2


@pytest.fixture(scope="module")
def original() -> str:
    source = SCRIPT.read_text(encoding="utf-8")
    if ORIGINAL_IMPORT not in source:
        pytest.fail(f"{SCRIPT} no longer imports the experimental API as TF 2.3 code did")
    return source


@pytest.fixture(scope="module")
def reference(original) -> list[float]:
    compat_lso.install()
    try:
        with pytest.warns(DeprecationWarning):
            return run(original)
    finally:
        compat_lso.uninstall()


def assert_same_training(migrated: str, reference: list[float]) -> None:
    assert run(migrated) == pytest.approx(
        reference, rel=1e-6, nan_ok=True
    )  # the overflow step's loss is nan


@pytest.mark.parametrize("target", ["shim", "keras2"])
def test_migrated_project_trains_like_the_original(original, reference, target):
    if target == "keras2" and not KERAS_2:
        pytest.skip(
            "the keras2 target keeps get_scaled_loss/get_unscaled_gradients, which need Keras 2"
        )
    result = migrate(original, target)
    assert not [f for f in result.findings if not f.fixed]
    assert not [
        n
        for n in ast.walk(ast.parse(result.text))
        if isinstance(n, ast.ImportFrom)
        and ("experimental" in (n.module or "") or any(a.name == "experimental" for a in n.names))
    ]
    assert_same_training(result.text, reference)


def test_project_on_the_shims_experimental_class_migrates_too(original, reference):
    on_shim = original.replace(ORIGINAL_IMPORT, SHIM_EXPERIMENTAL_IMPORT)
    result = migrate(on_shim, "keras2")
    assert (
        "compat_lso.LossScaleOptimizer(" in result.text
        and SHIM_EXPERIMENTAL_IMPORT not in result.text
    )
    assert sorted(f.code for f in result.findings) == ["LSO010", "LSO013"]
    assert_same_training(result.text, reference)
