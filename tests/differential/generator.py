"""Small TF 2.4-2.15 (and TF 2.1-2.8 experimental) training programs, one option per axis.

A program is chosen by a seed (`choose`) or named axis by axis (`Axes`), and `render` writes its
source: a Dense model whose weights are set from seeded NumPy, `STEPS` optimizer steps on seeded
data (one step's inputs overflow float16 when `overflow` is on), and a module-level `TRACE` of
what each step gave (the loss, every weight, and the loss scale where `reads_scale`). Nothing in
the text is written for the codemod's sake: each form is one real code uses (tests/codemods/forms
names the repositories).
"""

from __future__ import annotations

import dataclasses
import random

STEPS = 4
AXES: dict[str, tuple[str, ...]] = {
    # The API generation: TF 2.1-2.8's experimental class, or TF 2.4-2.15's non-experimental one.
    "era": ("tf24", "experimental"),
    "construction": ("class", "alias", "factory", "attribute", "config", "subclass"),
    "scaling": ("tape", "none", "minimize", "compile", "wrap", "accumulation", "distribute"),
    "scale": ("dynamic", "fixed", "runtime", "policy"),
    "optimizer": ("SGD", "Adam", "legacy", "schedule"),
    "overflow": ("yes", "no"),
    "reads_scale": ("no", "yes"),
}
# The first option of each axis is its simplest: the shrinker moves an axis there.
SIMPLEST = {"era": "tf24", "construction": "class", "scaling": "tape", "scale": "dynamic",
            "optimizer": "SGD", "overflow": "no", "reads_scale": "no"}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Axes:
    era: str = "tf24"
    construction: str = "class"
    scaling: str = "tape"
    scale: str = "dynamic"
    optimizer: str = "SGD"
    overflow: str = "no"
    reads_scale: str = "no"
    data_seed: int = 0

    def name(self) -> str:
        parts = [getattr(self, axis) for axis in AXES]
        return "-".join(parts) + f"-d{self.data_seed}"

    def valid(self) -> bool:
        """Combinations that are one program in TF 2.4-2.15 code (or TF 2.1-2.8's)."""
        if self.scale == "policy" and (self.era != "experimental" or self.scaling != "compile"):
            return False  # Policy(name, loss_scale=) is the experimental API, used by compile()
        if self.scaling == "wrap":  # compile() wraps the optimizer itself: no class written
            return self.construction == "class" and self.scale == "dynamic"
        if self.scaling == "compile" and self.reads_scale == "yes":
            return False  # the scale is read from the loop's optimizer
        if self.era == "tf24" and self.construction == "subclass":
            # TF 2.11-2.15's class is a metaclass factory: a subclass's instances take no
            # arguments there (`ScaledOptimizer() takes no arguments`), so no TF 2.15 program
            # subclasses it; the experimental class (through compat_lso.install()) can be.
            return False
        return not (self.era == "experimental" and self.optimizer == "legacy")


def choose(rng: random.Random) -> Axes:
    while True:
        axes = Axes(
            **{axis: rng.choice(options) for axis, options in AXES.items()},
            data_seed=rng.randrange(1000),
        )
        if axes.valid():
            return axes


def programs(seed: int, count: int) -> list[Axes]:
    rng = random.Random(seed)
    return [choose(rng) for _ in range(count)]


# -- the source text -----------------------------------------------------------------------------

HEADER = '''\
"""Differential test program {name}."""

import os

import numpy as np
import tensorflow as tf
{imports}
{policy}
TRACE = []
RNG = np.random.default_rng({seed})
X = RNG.normal(size=(8, 3)).astype("float32")
Y = X.sum(axis=1, keepdims=True) + 1.0
FACTORS = {factors}


def record(loss, model, scale=None):
    weights = [float(v) for w in model.get_weights() for v in np.ravel(w)]
    loss = None if loss is None else float(loss)
    TRACE.append({{"loss": loss, "weights": weights, "scale": scale}})


def make_model():
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(3,)),
            tf.keras.layers.Dense(4),
            tf.keras.layers.Dense(1, dtype="float32"),
        ]
    )
    model.set_weights(
        [RNG.normal(size=w.shape).astype("float32") * 0.5 for w in model.get_weights()]
    )
    record(None, model)
    return model

'''


def _inner(axes: Axes) -> str:
    keras = "tf.keras.optimizers"
    return {
        "SGD": f"{keras}.SGD(learning_rate=0.05)",
        "Adam": f"{keras}.Adam(learning_rate=0.01)",
        "legacy": f"{keras}.legacy.SGD(learning_rate=0.05)",
        "schedule": f"{keras}.SGD({keras}.schedules.ExponentialDecay(0.1, 1, 0.5))",
    }[axes.optimizer]


def _scale_args(axes: Axes) -> tuple[str, str]:
    """(the arguments after the inner optimizer, the lines that define what they name)."""
    runtime = (
        'LOSS_SCALE = os.environ.get("DIFFTEST_LOSS_SCALE", "{default}")\n'
        'LOSS_SCALE = LOSS_SCALE if LOSS_SCALE == "dynamic" else float(LOSS_SCALE)\n'
    )
    default = "dynamic" if axes.data_seed % 2 else "128"
    if axes.era == "experimental":
        return {
            "dynamic": ('loss_scale="dynamic"', ""),
            "fixed": ("loss_scale=128", ""),
            "runtime": ("loss_scale=LOSS_SCALE", runtime.format(default=default)),
            "policy": ('loss_scale="dynamic"', ""),
        }[axes.scale]
    dynamic = "dynamic=True, initial_scale=1024, dynamic_growth_steps=2"
    if axes.data_seed % 3 == 0:
        dynamic = ""  # the defaults: 2**15, growing after 2000 steps
    return {
        "dynamic": (dynamic, ""),
        "fixed": ("dynamic=False, initial_scale=128", ""),
        "runtime": (
            'dynamic=LOSS_SCALE == "dynamic", '
            'initial_scale=None if LOSS_SCALE == "dynamic" else LOSS_SCALE',
            runtime.format(default=default),
        ),
        "policy": (dynamic, ""),
    }[axes.scale]


def _lso_name(axes: Axes) -> str:
    module = "mpx" if axes.era == "experimental" else "mp"
    if axes.construction == "alias":
        return f"{module}.LossScaleOptimizer"
    if axes.era == "experimental":
        return "tf.keras.mixed_precision.experimental.LossScaleOptimizer"
    return "tf.keras.mixed_precision.LossScaleOptimizer"


def _construction(axes: Axes) -> tuple[str, str]:
    """(module-level definitions, the expression that builds the optimizer from `inner`)."""
    args, defs = _scale_args(axes)
    lso = _lso_name(axes)
    call = f"{lso}(inner{', ' + args if args else ''})"
    if axes.construction == "factory":
        defs += f"\n\ndef build_optimizer(inner):\n    return {call}\n\n"
        return defs, "build_optimizer(inner)"
    if axes.construction == "attribute":
        defs += (
            "\n\nclass Trainer:\n    def __init__(self, inner):\n"
            f"        self.optimizer = {call}\n\n"
        )
        return defs, "Trainer(inner).optimizer"
    if axes.construction == "config":
        kwargs = "{" + ", ".join(_as_dict_items(args)) + "}"
        defs += f"\nOPTIMIZER_KWARGS = {kwargs}\n"
        return defs, f"{lso}(inner, **OPTIMIZER_KWARGS)"
    if axes.construction == "subclass":
        defs += f"\n\nclass ScaledOptimizer({lso}):\n    pass\n\n"
        return defs, f"ScaledOptimizer(inner{', ' + args if args else ''})"
    return defs, call


def _as_dict_items(args: str) -> list[str]:
    items = []
    depth, start = 0, 0
    pieces = []
    for i, char in enumerate(args):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            pieces.append(args[start:i])
            start = i + 1
    if args.strip():
        pieces.append(args[start:])
    for piece in pieces:
        key, value = piece.strip().split("=", 1)
        items.append(f'"{key}": {value}')
    return items


def render(axes: Axes) -> str:
    from tests.differential.loops import LOOPS

    imports = ""
    if axes.construction == "alias":
        imports = (
            "from tensorflow.keras.mixed_precision import experimental as mpx\n"
            if axes.era == "experimental"
            else "from tensorflow.keras import mixed_precision as mp\n"
        )
    if axes.scale == "policy":
        policy = (
            "\ntf.keras.mixed_precision.experimental.set_policy(\n"
            '    tf.keras.mixed_precision.experimental.Policy("mixed_float16", loss_scale=128)\n'
            ")\n"
        )
    elif axes.era == "experimental":
        policy = '\ntf.keras.mixed_precision.experimental.set_policy("mixed_float16")\n'
    else:
        policy = '\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
    factors = [1.0] * STEPS
    if axes.overflow == "yes":
        factors[1 + axes.data_seed % (STEPS - 1)] = 1e5
    header = HEADER.format(
        name=axes.name(),
        imports=imports,
        policy=policy,
        seed=axes.data_seed,
        factors=repr(factors),
    )
    if axes.scaling == "wrap" or axes.scale == "policy":
        defs, build = "", ""
    else:
        defs, build = _construction(axes)
    return header + defs + LOOPS[axes.scaling](axes, _inner(axes), build)
