"""The toy kind's one rule, and the findings it draws from a :class:`ToyComparison`."""

from __future__ import annotations

from ad_diff.core.model import Category, Finding, Severity
from ad_diff.core.rules import Rule
from tests.unit.kinds.toy.model import ToyComparison

CHANGED = Rule(
    "ADX001", "toy-number-changed", Category.CONFIG, Severity.ERROR,
    "toy number {before} -> {after} ({transforms} transforms paired)",
    "The runs' toy numbers differ.",
)
RULES: tuple[Rule, ...] = (CHANGED,)


def classify(section: ToyComparison) -> list[Finding]:
    """``ADX001`` when the numbers differ."""
    if section.baseline == section.candidate:
        return []
    return [CHANGED.make(before=section.baseline, after=section.candidate, transforms=section.transforms)]
