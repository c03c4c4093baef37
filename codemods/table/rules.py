"""The migration rules, in code order: one module each under codemods/rules/."""

from __future__ import annotations

from typing import Final

from codemods.table.base import Rule
from codemods.table.private import PRIVATE_RULES
from codemods.table.rules_compile import COMPILE_RULES
from codemods.table.rules_experimental import EXPERIMENTAL_RULES
from codemods.table.rules_gradients import GRADIENT_RULES
from codemods.table.rules_optimizers import OPTIMIZER_RULES
from codemods.table.rules_policy import POLICY_RULES
from codemods.table.rules_surface import SURFACE_RULES
from codemods.table.rules_tf1 import TF1_RULES
from codemods.table.rules_tf24 import TF24_RULES
from codemods.table.rules_values import VALUE_RULES

# The sweep's own codes (LSO1xx) are in removed.py; codemods.table.RULES holds both.
MIGRATION_RULES: Final[tuple[Rule, ...]] = tuple(
    sorted(
        (
            *EXPERIMENTAL_RULES,
            *POLICY_RULES,
            *PRIVATE_RULES,
            *TF24_RULES,
            *SURFACE_RULES,
            *GRADIENT_RULES,
            *COMPILE_RULES,
            *OPTIMIZER_RULES,
            *VALUE_RULES,
            *TF1_RULES,
        ),
        key=lambda rule: rule.code,
    )
)
