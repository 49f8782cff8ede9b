"""The toy kind's section of the PR comment."""

from __future__ import annotations

from tests.unit.kinds.toy.model import ToyComparison


def render_markdown(section: ToyComparison) -> str:
    """One line: both numbers."""
    return f"### Toy numbers\n\nbaseline {section.baseline}, candidate {section.candidate}\n"
