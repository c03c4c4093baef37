"""What every table module shares: the targets, the Rule record, where the shim target points."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

Target = Literal["keras2", "keras3", "shim"]
TARGETS: Final[tuple[Target, ...]] = ("keras2", "keras3", "shim")

TARGET_HELP: Final[dict[Target, str]] = {
    "keras2": "TF 2.4-2.15 tf.keras and the tf_keras package (Keras 2 API)",
    "keras3": "TF 2.16+ tf.keras / keras (Keras 3 API)",
    "shim": "compat_lso, which runs on every supported TensorFlow/Keras generation",
}

SAFE: Final = "safe"
MANUAL: Final = "manual"
NOTE: Final = "note"  # nothing to change, but the user is told (a note, counted apart)
Action = Literal["safe", "manual", "note", "none"]


@dataclass(frozen=True)
class Rule:
    """One migration rule: what it matches, and per target whether it rewrites or reports."""

    code: str
    name: str
    summary: str
    # Per target: "safe" (rewritten), "manual" (reported only), "note" (a note, no change) or
    # "none" (nothing to do there).
    action: dict[Target, Action]
    # What the user must do by hand where the rule reports: the `help:` line under its findings,
    # one line (~100 characters, never over 160); the reasoning goes in `details`.
    instruction: str
    # Catalogue example: the old code, and the rewrite per target (None: reported, unchanged).
    example: str = ""
    example_after: dict[Target, str | None] = field(default_factory=dict)
    # Some rules are safe only when their argument is statically known; said in the catalogue.
    note: str = ""
    # Per target, an instruction that replaces `instruction` there (Keras 3 needs its own words).
    instructions: dict[Target, str] = field(default_factory=dict)
    # Targets where the rule is `safe` for some forms and reports the others (the note says
    # which): the catalogue shows "rewritten where safe, else reported" there.
    partly: frozenset[Target] = frozenset()
    # The manual work in full, with the reasons, which the one-line instructions leave out:
    # printed once by `--explain CODE` and in docs/rules.md, never in a finding.
    details: str = ""

    @property
    def docs(self) -> str:
        """Where the catalogue explains the rule (docs/rules.md, generated from this table)."""
        return f"docs/rules.md#{self.code.lower()}-{self.name}"

    def instruction_on(self, target: Target) -> str:
        """What the user must do by hand where this rule reports on `target`."""
        return self.instructions.get(target, self.instruction)


# Where the shim target sends what it cannot express with the new Keras names.
SHIM_MODULE: Final = "compat_lso"
SHIM_LSO: Final = "compat_lso.LossScaleOptimizer"
SHIM_EXPERIMENTAL: Final = "compat_lso.experimental"
SHIM_EXPERIMENTAL_LSO: Final = f"{SHIM_EXPERIMENTAL}.LossScaleOptimizer"

# The first lines of the catalogue's examples.
TF_IMPORT: Final = "import tensorflow as tf\n"
SHIM_IMPORT: Final = "import compat_lso\n"

# The help of every keras3 rewrite of TF 2.4-2.15 loss scaling: what changes once Keras 3's class
# runs it, a pointer only; LSO022's note at the optimizer says what (rules_gradients.py).
KERAS3_BEHAVIOUR: Final = (
    "Keras 3's dynamic loss-scale rule differs from TF 2.4's (--explain LSO022); --target shim "
    "keeps TF 2.4's"
)

# LSO011's note where the rewritten loss scale optimizer is built elsewhere (compile()'s).
# The help line of the notes that say Keras 3's rule now runs (LSO006, LSO011, LSO017; LSO022's
# own instruction says the same at a constructor).
KERAS3_RULE_HELP: Final = (
    "skipped steps delay Adam's bias correction and schedules (--explain LSO022); "
    "--target shim keeps TF 2.4's rule"
)
# LSO011 where get_unscaled_gradients divides gradients of a loss never scaled: the old code's
# own bug (it trains at gradients / scale on TF 2.15 too). Keeping or fixing it is the user's
# choice, said alike on every target (and by the audit's `unscaled-twice`).
NEVER_SCALED_FACT: Final = (
    "{receiver}.get_unscaled_gradients() divides gradients of the never-scaled loss `{loss}` "
    "(line {line}): training today runs at gradients / loss scale"
)
NEVER_SCALED_HELP: Final[dict[str, str]] = {
    "keras3": (
        "your choice: drop the call to keep today's numbers, or take the gradients of "
        "opt.scale_loss(loss) (numbers change)"
    ),
    "keras2": (
        "your choice: keep the call for today's numbers, or take the gradients of "
        "opt.get_scaled_loss(loss) (numbers change)"
    ),
}
NEVER_SCALED_HELP["shim"] = NEVER_SCALED_HELP["keras2"]
KERAS3_RULE_HERE: Final = (
    "runs on Keras 3's LossScaleOptimizer, not built here: skipped steps and the scale follow "
    "its rule, not TF 2.15's (--explain LSO022)"
)
# Keras 3's only fixed loss scaling, and the compile() flag it needs (see LSO015).
KERAS3_FIXED: Final = (
    "pass loss_scale_factor=N to the inner optimizer's constructor and use that optimizer "
    "without a LossScaleOptimizer; give compile() auto_scale_loss=False, or under the "
    "'mixed_float16' policy it wraps the optimizer in a dynamic LossScaleOptimizer, which "
    "switches loss_scale_factor off"
)

# LSO001: a loss_scale only known at run time (codemods/rules/_runtime_scale.py).
RUN_TIME_LOSS_SCALE: Final = (
    "On keras2 and keras3 a loss_scale only known at run time that is a name or an attribute of "
    "one (`FLAGS.loss_scale`) is converted where the code runs, in a module that builds no "
    "LossScale object and where no value the module shows reaching it may be one: a call of a "
    "class or function the module cannot see into (a LossScale subclass or a factory imported "
    "from another module, `x = RevisedDynamicLossScale()`), followed through names, the "
    "parameters the module's own calls fill, its functions' returns and its attributes' "
    "stores, makes it manual, naming that call. What the module cannot see at all (a flag, a "
    "parameter no call here fills) is converted: an object passed there now fails, Keras 2 "
    "with TypeError at the call, as the help says. keras2: "
    '`dynamic=s == "dynamic", initial_scale=None if s == "dynamic" else s`, which keeps '
    "'dynamic' and every number. keras3: `(LossScaleOptimizer(inner) if s == \"dynamic\" else "
    "inner with loss_scale_factor=s)`, where a fixed scale could be written (below: the inner "
    "optimizer constructed in the call, the result going only to compile(), given "
    "auto_scale_loss=False, or to the optimizer's own methods), which keeps every number, and "
    "'dynamic' on Keras 3's dynamic rule (LSO022 notes it); one branch runs, so the inner "
    "optimizer's arguments are evaluated once. Elsewhere the finding says which condition fails."
)


# Keras 3's read of the current loss scale, as LSO010 and LSO017 say it.
KERAS3_SCALE_READ: Final = (
    "tf.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, tf.float32)"
)
# The fix for a read of `policy.loss_scale`, which the new Policy lacks, per target (LSO100).
POLICY_LOSS_SCALE_READ: Final[dict[Target, str]] = {
    "keras2": "read it from the LossScaleOptimizer (model.optimizer after compile): opt.loss_scale",
    "shim": "read it from the LossScaleOptimizer (model.optimizer after compile): opt.loss_scale",
    "keras3": f"read it from the LossScaleOptimizer: {KERAS3_SCALE_READ}",
}
