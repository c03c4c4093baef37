"""The plain Keras optimizer in mixed-precision code: LSO026, Keras 2's `lr=` (the learning rate's
old name), which Keras 3 refuses; LSO027, one optimizer compiled with two models, which Keras 3
refuses to train on the second; and Keras's optimizer factories, which meaning/instances.py
follows a loss scale optimizer through."""

from __future__ import annotations

from typing import Final

from codemods.table.base import MANUAL, SAFE, SHIM_IMPORT, SHIM_LSO, TF_IMPORT, Rule

# Where old code reaches Keras: tf.keras, its compat aliases, standalone keras and tf_keras.
_KERAS_MODULES: Final = (
    "tensorflow.keras",
    "tensorflow.compat.v1.keras",
    "tensorflow.compat.v2.keras",
    "keras",
    "tf_keras",
)
# Keras's calls that build an optimizer from another's config (`deserialize(serialize(opt))`,
# `get(config)`, `get(opt)`), and that give an optimizer's config (`opt.get_config()` too):
# meaning/instances.py follows a loss scale optimizer through them, as through `X.from_config`.
OPTIMIZER_FACTORIES: Final[frozenset[str]] = frozenset(
    f"{keras}.optimizers.{name}" for keras in _KERAS_MODULES for name in ("deserialize", "get")
)
OPTIMIZER_CONFIGS: Final[frozenset[str]] = frozenset(
    f"{keras}.optimizers.serialize" for keras in _KERAS_MODULES
)
# The Keras optimizer classes whose constructor took `lr=` (OptimizerV2's, TF 2.11-2.15's and
# their legacy twins), under every module old code reaches them through.
KERAS_OPTIMIZER_CLASSES: Final[frozenset[str]] = frozenset(
    {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam", "Ftrl"}
    | {"Lion", "Lamb", "Adafactor"}
)
KERAS_OPTIMIZER_MODULES: Final[tuple[str, ...]] = tuple(
    f"{keras}.optimizers.{submodule}"
    for keras in _KERAS_MODULES
    for submodule in ("", "legacy.", "experimental.")
)
# What LSO026 looks for, as the prefilter reads a file (with a word of MIXED_PRECISION_WORDS).
LR_WORDS: Final[tuple[str, ...]] = ("lr=", "lr =", "'lr'", '"lr"')
# LSO026's fact, per class kind: TF 2.11-2.15's default optimizers dropped `lr=` (a logged
# warning, the default rate kept); OptimizerV2 (TF 2.4-2.10's, TF 2.11-2.15's legacy) used it.
LR_FACT: Final = "{written}: lr= -> learning_rate= (Keras 3 refuses lr; {what})"
LR_DEFAULT_OPTIMIZER: Final = "TF 2.11-2.15 ignored it and kept the default rate"
LR_LEGACY_OPTIMIZER: Final = "the rate TF 2.4-2.15 used"

_LSO026_BEFORE = (
    TF_IMPORT + "policy = tf.keras.mixed_precision.Policy('mixed_float16')\n"
    "opt = tf.keras.optimizers.Adam(lr=1e-3, beta_1=0.5)\n"
)
_LSO027_BEFORE = (
    TF_IMPORT + "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())\n"
    "generator.compile(optimizer=opt, loss='mse')\n"
    "discriminator.compile(optimizer=opt, loss='binary_crossentropy')\n"
)

OPTIMIZER_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO026",
        name="lr-argument",
        summary=(
            "Keras 2's lr= (the learning rate's old name) in a Keras optimizer's constructor or "
            "config: Keras 3 refuses it, TF 2.11-2.15's default optimizers ignored it"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        partly=frozenset({"keras2", "keras3", "shim"}),
        instruction="keep one of them, as learning_rate=<lr's value> (Keras 2 used lr)",
        details=(
            "`tf.keras.optimizers.Adam(lr=1e-3)` is the spelling of TF 2.0-2.10, whose "
            "optimizers (OptimizerV2, TF 2.11-2.15's `tf.keras.optimizers.legacy`) took `lr` as "
            "the learning rate, over `learning_rate=` where both were given. Keras 3 refuses it "
            "(ValueError: Argument(s) not recognized). TF 2.11-2.15's default optimizers dropped "
            "it with a logged warning and kept their default rate, so code written for TF 2.10 "
            "or earlier trained there at another rate than it says: the rewrite gives the rate "
            "the code was written with, on every target, and its fact at the line says so. "
            "Rewritten: the keyword of a constructor call of a Keras optimizer class (SGD, Adam, "
            '..., also tf.keras.optimizers.legacy.X and experimental.X), and the "lr" key of a '
            "config dict written in `tf.keras.optimizers.get({...})`, `deserialize({...})` or "
            "`X.from_config({...})`. Reported: a call or config that gives both lr and "
            "learning_rate. Not seen: an lr inside **kwargs or a config built elsewhere; "
            "`python -m compat_lso run` takes `lr=` there as Keras 2 did, with a "
            "DeprecationWarning at the line. On keras3 and shim, LSO024 renames it in the legacy "
            "optimizer calls it rewrites."
        ),
        example=_LSO026_BEFORE,
        example_after={
            target: _LSO026_BEFORE.replace("lr=", "learning_rate=")
            for target in ("keras2", "keras3", "shim")
        },
        note=(
            'In modules that use mixed precision. `lr=` (a keyword) and a config\'s "lr" key '
            "become learning_rate; both given is reported (Keras 2 used lr)."
        ),
    ),
    Rule(
        code="LSO027",
        name="shared-optimizer",
        summary=(
            "one optimizer passed to two models' compile(): Keras 3 trains only the variables it "
            "was built for, and refuses the second model's at its first step"
        ),
        action={"keras2": "none", "keras3": MANUAL, "shim": "none"},
        instruction=(
            "after both compile(): opt.build(a.trainable_variables + b.trainable_variables) "
            "(shared as in TF 2.4), or --target shim"
        ),
        details=(
            "Keras 2's optimizers created a variable's slots at its first step, so one optimizer "
            "could train several models (a GAN's generator and discriminator compiled with the "
            "same loss scale optimizer): one step counter, which Adam's bias correction reads, "
            "and one loss scale for both. A Keras 3 optimizer is built for the variables of its "
            "first step and raises `ValueError: Unknown variable` at the second model's first "
            "step (TF 2.11-2.15's default optimizers raised KeyError there too). Building it for "
            "both models' variables before training keeps Keras 2's numbers: zero slots per "
            "variable, one counter, one scale (tests/old_code/test_gan_project.py checks it "
            "against TF 2.15). Giving each model its own optimizer instead trains differently "
            "(a counter and a loss scale each). compat_lso's class shares one as Keras 2 did "
            "(--target shim, `python -m compat_lso run`)."
        ),
        example=_LSO027_BEFORE,
        example_after={
            "keras2": _LSO027_BEFORE,
            "keras3": None,
            "shim": SHIM_IMPORT
            + _LSO027_BEFORE.replace("tf.keras.mixed_precision.LossScaleOptimizer", SHIM_LSO),
        },
        note=(
            "keras3: where one name (or `self.x` attribute) bound once to an optimizer's "
            "construction is the optimizer of two compile() calls on different models that "
            "both run (not in two branches of one `if`), and the module never calls its "
            "build(): reported at the second."
        ),
    ),
)
