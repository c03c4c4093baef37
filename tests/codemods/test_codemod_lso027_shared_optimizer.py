"""LSO027: one optimizer passed to two models' compile() (keras3): reported at the second, where
one object is provably shared; nothing where it may not be (no false finding). That Keras 3
refuses the second model's variables, and that building the optimizer for both keeps TF 2.15's
numbers, is tests/old_code/test_gan_project.py's (the GAN project, run and migrated)."""

import pytest

from codemods import table
from codemods.apply.engine import migrate

TF = "import tensorflow as tf\n"
LSO = "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())"


def _reported(source: str) -> list[tuple[int, str, str]]:
    return [
        (f.line, f.message, f.help)
        for f in migrate(TF + source, "keras3").findings
        if f.code == "LSO027" and not f.fixed
    ]


def test_a_gans_class_compiling_both_models_with_its_optimizer():
    source = (
        "class GAN:\n"
        "    def __init__(self):\n"
        f"        self.optimizer = {LSO}\n"
        "        self.generator = build()\n"
        "        self.generator.compile(optimizer=self.optimizer, loss='mse')\n"
        "        self.discriminator = build()\n"
        "        self.discriminator.compile(\n"
        "            loss='binary_crossentropy', optimizer=self.optimizer)\n"
    )
    assert _reported(source) == [
        (
            8,
            "self.optimizer is also self.generator's optimizer (compile() at line 6): Keras 3 "
            "refuses self.discriminator's variables at its first step",
            "after both compile(): self.optimizer.build(self.generator.trainable_variables + "
            "self.discriminator.trainable_variables) (shared as in TF 2.4), or use --target shim",
        )
    ]


SHARED = [
    pytest.param(f"opt = {LSO}\na.compile(opt, 'mse')\nb.compile(opt, 'mse')\n", id="positional"),
    pytest.param(
        "opt = tf.keras.optimizers.Adam(1e-3)\n"
        "a.compile(optimizer=opt)\nb.compile(optimizer=opt)\n",
        id="a-plain-optimizer",
    ),
    pytest.param(
        "opt = tf.keras.optimizers.get('adam')\ndef build():\n    a.compile(optimizer=opt)\n"
        "    b.compile(optimizer=opt)\n",
        id="one-object-from-get-used-in-a-function",
    ),
    pytest.param(
        f"opt = {LSO}\nif flag:\n    a.compile(optimizer=opt)\nb.compile(optimizer=opt)\n",
        id="one-in-an-if-the-other-after-it",
    ),
    pytest.param(
        "def build():\n    opt = tf.keras.optimizers.Adam(1e-3)\n"
        f"    opt = {LSO.replace('tf.keras.optimizers.Adam()', 'opt')}\n"
        "    a.compile(optimizer=opt)\n    b.compile(optimizer=opt)\n",
        id="wrapped-in-place-before-both",  # chansoopark98/Tensorflow-Keras-GAN's keras_gan.py
    ),
]


def test_three_models_are_all_named_in_the_help():
    # Building for the first two only leaves the third's variables unknown to Keras 3.
    compiles = "".join(f"{m}.compile(optimizer=opt)\n" for m in ("g", "gan", "d"))
    source = f"opt = {LSO}\n{compiles}"
    assert _reported(source) == [
        (
            4,
            "opt is also g's optimizer (compile() at line 3): Keras 3 refuses gan's variables at "
            "its first step",
            "after the last compile() (line 5): opt.build(g.trainable_variables + "
            "gan.trainable_variables + d.trainable_variables) (shared as in TF 2.4), or use "
            "--target shim",
        )
    ]


@pytest.mark.parametrize("source", SHARED)
def test_shared(source):
    reported = _reported(source)
    assert [line for line, _, _ in reported] == [1 + source.count("\n")]


NOT_SHARED = [
    pytest.param(
        f"opt = {LSO}\na.compile(optimizer=opt)\na.compile(optimizer=opt)\n",
        id="the-same-model-compiled-again",
    ),
    pytest.param(
        "a.compile(optimizer='adam')\nb.compile(optimizer='adam')\n", id="a-name-gives-each-its-own"
    ),
    pytest.param(
        f"a.compile(optimizer={LSO})\nb.compile(optimizer={LSO})\n", id="two-constructions"
    ),
    pytest.param(
        f"opt = {LSO}\nif gan:\n    a.compile(optimizer=opt)\n"
        "else:\n    b.compile(optimizer=opt)\n",
        id="two-branches-of-one-if",
    ),
    pytest.param(
        f"opt = {LSO}\na.compile(optimizer=opt)\nopt = {LSO}\nb.compile(optimizer=opt)\n",
        id="rebound-between",
    ),
    pytest.param(
        f"for m in models:\n    opt = {LSO}\n    m.compile(optimizer=opt)\n"
        "    other.compile(optimizer=opt)\n",
        id="bound-in-a-loop",
    ),
    pytest.param("a.compile(optimizer=opt)\nb.compile(optimizer=opt)\n", id="not-made-here"),
    pytest.param(
        f"opt = {LSO}\na.compile(optimizer=opt)\nb.compile(optimizer=opt)\n"
        "opt.build(a.trainable_variables + b.trainable_variables)\n",
        id="built-for-both-by-the-code-itself",
    ),
    pytest.param(
        "def build(opt):\n    a.compile(optimizer=opt)\n    b.compile(optimizer=opt)\n",
        id="a-parameter",
    ),
    pytest.param(
        f"class T:\n    def a(self):\n        self.opt = {LSO}\n    def b(self):\n"
        f"        self.opt = {LSO}\n        x.compile(optimizer=self.opt)\n"
        "        y.compile(optimizer=self.opt)\n",
        id="an-attribute-stored-twice",
    ),
]


@pytest.mark.parametrize("source", NOT_SHARED)
def test_not_shared(source):
    assert _reported(source) == []


@pytest.mark.parametrize("target", ["keras2", "shim"])
def test_other_targets_train_it_as_keras_2_did(target):
    # keras2: Keras 2's class; shim: compat_lso's shares one (compat_lso/keras3/shared_optimizer).
    source = TF + f"opt = {LSO}\na.compile(optimizer=opt)\nb.compile(optimizer=opt)\n"
    assert "LSO027" not in {f.code for f in migrate(source, target).findings}
    assert table.RULES_BY_CODE["LSO027"].action[target] == "none"
