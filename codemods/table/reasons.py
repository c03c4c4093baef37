"""Why a place stays manual: one short word per reason, with its meaning in one line.

Every finding left for manual work carries one of these words (`Finding.reason`): the rules give
it where they report (`Context.report`, `Context.manual`, typed with `Reason` so that a missing or
unknown word is a type error), the sweep where it flags (codemods/sweep/wording.py). `--statistics`
counts the manual findings by reason, json and SARIF carry the word per finding, so a reader sees
what no program could decide apart from what the codemod does not (yet) do.
"""

from __future__ import annotations

from typing import Literal, get_args

Reason = Literal[
    "run-time",
    "elsewhere",
    "keras3-fixed",
    "no-equivalent",
    "private",
    "choice",
    "gated",
    "invalid",
    "follows",
    "limit",
]

# In the order `--statistics` lists them: first what no program could decide, then what follows
# from the code as written, last the codemod's own limits.
REASONS: dict[Reason, str] = {
    "run-time": "a value or type only known when the program runs",
    "elsewhere": "the value comes from, or goes to, code the codemod does not follow",
    "keras3-fixed": "Keras 3 has no fixed-scale LossScaleOptimizer (loss_scale_factor: not exact)",
    "no-equivalent": "the target has no equivalent of this API, or one that behaves differently",
    "private": "TensorFlow's private API, which no public name stands for here",
    "choice": "the user must choose: the code can mean more than one thing",
    "gated": "in a branch for another TensorFlow version or feature: the installed one decides",
    "invalid": "the call does not fit the API it names (it failed before the migration too)",
    "follows": "follows from another place left for manual work (an import kept for it)",
    "limit": "a known limit of the codemod: it cannot write or follow this form",
}

assert set(REASONS) == set(get_args(Reason)), "every Reason word has a meaning, and only those"


class Why(str):
    """Why a rewrite is not made, as text (what the fact line says after `not rewritten:`) that
    knows its reason's word: helpers that return why-not strings return these, so the word
    travels with the words to wherever the finding is made."""

    reason: Reason

    def __new__(cls, reason: Reason, text: str) -> Why:
        made = super().__new__(cls, text)
        made.reason = reason
        return made


def reason_of(text: str, default: Reason) -> Reason:
    """The word a `Why` carries; `default` for a plain string (text built without one)."""
    return text.reason if isinstance(text, Why) else default
