"""Findings about the expected-changes file itself (codes ``ADX0xx``)."""

from __future__ import annotations

from ad_diff.core.model import Category, Severity
from ad_diff.core.rules import Rule

STALE = Rule(
    "ADX001", "stale-expectation", Category.EXPECTED_CHANGES, Severity.WARNING,
    "expected change at {file}:{line} ({what}) matched no finding",
    "An entry of the expected-changes file (`--expected`) acknowledged nothing in this comparison: the "
    "change it describes no longer happens, or the entry's code/transform/counts are wrong. Remove or "
    "update it so the file keeps describing reality. Entries restricted to another `model` are not checked.",
)

RULES: tuple[Rule, ...] = (STALE,)
