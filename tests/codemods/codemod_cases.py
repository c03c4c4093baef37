"""Helpers for the rule tests: a rewrite case must rewrite exactly, parse, and be stable."""

from __future__ import annotations

import ast
import textwrap

from codemods.apply.engine import migrate
from codemods.source import Finding
from codemods.table import Target


def rewrite(before: str, target: Target = "keras2", **kwargs) -> tuple[str, list[Finding]]:
    result = migrate(textwrap.dedent(before), target, **kwargs)
    return result.text, result.findings


def assert_rewrites(before: str, after: str, target: Target = "keras2") -> list[Finding]:
    text, findings = rewrite(before, target)
    assert text == textwrap.dedent(after)
    ast.parse(text)
    again, _ = rewrite(text, target)
    assert again == text, "a second run must change nothing"
    return findings


def assert_unchanged(before: str, target: Target = "keras2") -> list[Finding]:
    text, findings = rewrite(before, target)
    assert text == textwrap.dedent(before)
    return findings


def manual_codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings if not f.fixed]
