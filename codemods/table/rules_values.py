"""LSO025: the removed experimental module held as a value, or reached through a name bound more
than one way. One module under codemods/rules/ (experimental_value.py)."""

from __future__ import annotations

from typing import Final

from codemods.table.base import SAFE, SHIM_IMPORT, TF_IMPORT, Rule, Target

_BEFORE = (
    "try:\n"
    "    from tf_keras import mixed_precision\n"
    "except ImportError:\n"
    "    from tensorflow.keras import mixed_precision\n"
    "mixed_precision.experimental.set_policy('mixed_float16')\n"
)
_AFTER = _BEFORE.replace("experimental.set_policy", "set_global_policy")

# The sweep's examples of the module held as a value (LSO102, LSO103), which --target shim rewrites.
STORED_MODULE: Final = (
    TF_IMPORT + "class Trainer:\n"
    "    def __init__(self):\n"
    "        self._mixed_precision = tf.keras.mixed_precision.experimental\n\n"
    "    def setup(self):\n"
    "        self._mixed_precision.set_policy('mixed_float16')\n"
)
RETURNED_MODULE: Final = (
    TF_IMPORT + "def mixed_precision_module():\n    return tf.keras.mixed_precision.experimental\n"
)


def shim_holds_its_module(example: str) -> dict[Target, str | None]:
    """Reported on keras2 and keras3; on shim the module becomes compat_lso.experimental."""
    held = example.removeprefix(TF_IMPORT).replace(
        "tf.keras.mixed_precision.experimental", "compat_lso.experimental"
    )
    return {
        "keras2": None,
        "keras3": None,
        "shim": SHIM_IMPORT + "\ncompat_lso.install()\n\n" + held,
    }


VALUE_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO025",
        name="experimental-module-value",
        summary=(
            "the removed experimental module held as a value (an attribute, a return, an "
            "argument) or reached through a name bound more than one way"
        ),
        action={"keras2": SAFE, "keras3": SAFE, "shim": SAFE},
        partly=frozenset({"keras2", "keras3", "shim"}),
        instruction=(
            "hand on the new module or class instead and change its users (--target shim keeps "
            "the old names)"
        ),
        example=_BEFORE,
        example_after={
            "keras2": _AFTER,
            "keras3": _AFTER,
            "shim": SHIM_IMPORT + "\ncompat_lso.install()\n\n" + _AFTER,
        },
        note=(
            "Every target: `mp.experimental.set_policy` / `mp.experimental.global_policy` where "
            "`mp` is bound more than one way and every binding is a Keras mixed_precision module "
            "(a fallback import between tf_keras and tf.keras) becomes `mp.set_global_policy` / "
            "`mp.global_policy`, which each of those modules has with the meaning LSO004 and "
            "LSO005 give it, so the rewrite holds whichever binding runs. shim: "
            "compat_lso.experimental holds TF 2.3's whole experimental surface "
            "(LossScaleOptimizer, Policy, set_policy, global_policy, the LossScale classes, the "
            "graph rewrite) with the old names and signatures, so the module itself where its "
            "value goes where the codemod cannot follow every use (stored in an attribute, "
            "returned, passed on, bound to a name bound more than one way) becomes "
            "compat_lso.experimental, and a removed class or function bound to a name bound "
            "more than one way becomes its compat_lso.experimental namesake; every use, in this "
            "module or another, then reads what it read on TF 2.3, and compat_lso.install() is "
            "added (compile() applies an experimental Policy's loss scale after it), as "
            "`python -m compat_lso run` does. Not where this module reads a member through it "
            "that compat_lso.experimental lacks (get_layer_policy), nor in a branch for TF < "
            "2.4 (LSO104): the sweep reports it (LSO102, LSO103). keras2 and keras3: a class "
            "alias bound to the experimental class in one branch and to the new one in another "
            "(a feature detection, OpenNMT-tf's `wrapper_class`) becomes the new class where the "
            "flow analysis follows every use to an isinstance/issubclass check or a call "
            "`cls(optimizer, **kwargs)` whose kwargs, bound in this function and read nowhere "
            "else, hold at most loss_scale='dynamic', which goes: the new class's default is "
            "the same dynamic scaling (2**15, doubling after 2000 finite steps; "
            "tests/codemods/test_codemod_semantics.py builds both); on keras3 LSO022 notes the "
            "call, where Keras 3's rule now runs. The module held as a value stays reported "
            "(LSO103, LSO102): its users may be in other modules, which the codemod does not "
            "see, and its members' signatures changed (Policy's loss_scale, LossScaleOptimizer's "
            "arguments)."
        ),
    ),
)
