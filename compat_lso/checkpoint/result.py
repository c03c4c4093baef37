"""What `load_legacy_checkpoint` returns, and the error it raises with `strict=True`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable


@dataclasses.dataclass(frozen=True)
class RestoredValue:
    """A checkpoint value assigned to a variable."""

    key: str  # the checkpoint key
    target: str  # what it was assigned to, e.g. "model dense/kernel", "optimizer iterations"
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.key} -> {self.target} {list(self.shape)}"


@dataclasses.dataclass(frozen=True)
class SkippedValue:
    """A checkpoint value not restored, or target state not found in the checkpoint."""

    key: str  # the checkpoint key, or "(target) <what>" for state missing from the checkpoint
    reason: str

    def __str__(self) -> str:
        return f"{self.key}: {self.reason}"


@dataclasses.dataclass(frozen=True)
class LegacyCheckpointRestore:
    """What `load_legacy_checkpoint` did.

    `restored`: values assigned. `skipped`: values deliberately left alone (not asked for, or a
    hyperparameter the target optimizer keeps in its config). `unmapped`: values that should have
    been restored and could not be, in either direction; non-empty only with `strict=False`.
    """

    prefix: str
    layout: str
    restored: tuple[RestoredValue, ...]
    skipped: tuple[SkippedValue, ...]
    unmapped: tuple[SkippedValue, ...]

    @property
    def complete(self) -> bool:
        return not self.unmapped

    def __str__(self) -> str:
        lines = [
            f"Restored {len(self.restored)} values from {self.prefix} ({self.layout}); "
            f"{len(self.skipped)} skipped, {len(self.unmapped)} unmapped."
        ]
        for title, items in (
            ("Restored", self.restored),
            ("Skipped", self.skipped),
            ("Unmapped (NOT restored)", self.unmapped),
        ):
            if items:
                lines.append(f"{title}:")
                lines.extend(f"  {item}" for item in items)
        return "\n".join(lines)


class LegacyCheckpointError(ValueError):
    """The checkpoint does not map completely onto the model and optimizer; nothing was assigned."""

    def __init__(self, prefix: str, unmapped: Iterable[SkippedValue]) -> None:
        self.prefix = prefix
        self.unmapped = tuple(unmapped)
        lines = [
            f"Cannot restore {prefix}: {len(self.unmapped)} value(s) do not map; nothing was "
            "restored. Pass strict=False to restore what maps and get this list back in the "
            "result's `unmapped`."
        ]
        lines.extend(f"  {item}" for item in self.unmapped)
        super().__init__("\n".join(lines))
