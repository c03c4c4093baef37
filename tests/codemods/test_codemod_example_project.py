"""End to end: the bundled TF 2.3-era project, migrated by the codemod, trains exactly as before.

`examples/legacy_project/train.py` runs the old API through `compat_lso.experimental`; its original
import (`from tensorflow.keras.mixed_precision import experimental as mixed_precision`, in its
docstring) is restored, the codemod migrates it, and the migrated script must produce the same
loss and loss-scale history, overflow step included, with no shim installed.
"""

import ast
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")
compat_lso = pytest.importorskip("compat_lso")

from codemods.engine import migrate  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "legacy_project" / "train.py"
SHIM_IMPORT = "from compat_lso import experimental as mixed_precision\n"
ORIGINAL_IMPORT = "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
KERAS_2 = hasattr(tf.keras.mixed_precision.LossScaleOptimizer, "get_scaled_loss")


def history(source: str) -> list[tuple[float, float]]:
    namespace = {"__name__": "legacy_train"}
    exec(compile(source, str(SCRIPT), "exec"), namespace)  # noqa: S102 - the project's own script
    return namespace["train"](namespace["build_model"](), namespace["make_optimizer"](), namespace["make_batches"]())


@pytest.fixture(scope="module")
def original() -> str:
    if not SCRIPT.exists() or SHIM_IMPORT not in SCRIPT.read_text(encoding="utf-8"):
        pytest.skip("examples/legacy_project/train.py is not the expected TF 2.3-era script")
    return SCRIPT.read_text(encoding="utf-8").replace(SHIM_IMPORT, ORIGINAL_IMPORT)


@pytest.fixture(scope="module")
def reference() -> list[tuple[float, float]]:
    with pytest.warns(DeprecationWarning):
        return history(SCRIPT.read_text(encoding="utf-8"))


def test_project_on_the_shims_experimental_class_migrates_too(reference):
    """The script as shipped (on compat_lso.experimental) goes to compat_lso.LossScaleOptimizer (LSO013)."""
    result = migrate(SCRIPT.read_text(encoding="utf-8"), "keras2")
    assert "compat_lso.LossScaleOptimizer(" in result.text and SHIM_IMPORT not in result.text
    migrated = [value for step in history(result.text) for value in step]
    assert migrated == pytest.approx([value for step in reference for value in step], rel=1e-6, nan_ok=True)


@pytest.mark.parametrize("target", ["shim", "keras2"])
def test_migrated_project_trains_like_the_original(original, reference, target):
    if target == "keras2" and not KERAS_2:
        pytest.skip("the keras2 target keeps get_scaled_loss/get_unscaled_gradients, which need Keras 2")
    result = migrate(original, target)
    code = ast.parse(result.text)
    assert not [n for n in ast.walk(code) if isinstance(n, ast.ImportFrom) and (
        "experimental" in (n.module or "") or any(a.name == "experimental" for a in n.names))]
    assert not [f for f in result.findings if not f.fixed]
    migrated = [value for step in history(result.text) for value in step]
    expected = [value for step in reference for value in step]
    assert migrated == pytest.approx(expected, rel=1e-6, nan_ok=True)  # the overflow step's loss is nan
    assert reference[6][1] < reference[5][1], "the overflow step halves the scale in both runs"
