"""LSO012: other members of a removed experimental namespace are reported."""

from tests.codemods.codemod_cases import assert_unchanged, manual_codes


def test_reported():
    findings = assert_unchanged(
        "import tensorflow as tf\n"
        "p = tf.keras.mixed_precision.experimental.get_layer_policy(layer)\n"
    )
    assert manual_codes(findings) == ["LSO012"]
    assert (findings[0].line, findings[0].col) == (2, 5)


def test_noop_for_other_experimental_namespaces():
    assert not assert_unchanged(
        "import tensorflow as tf\ntf.config.experimental.set_memory_growth(gpu, True)\n"
    )
