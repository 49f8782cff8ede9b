"""What the reports show of the toy kind's section: one line, both numbers. Every medium draws it (the PR
comment, the terminal, the HTML report) with no line of the toy's outside this folder."""

from __future__ import annotations

from ad_diff.core.view import Para, SectionView, ViewContext, line
from tests.unit.kinds.toy.model import ToyComparison


def view(section: ToyComparison, ctx: ViewContext) -> SectionView:
    """Both numbers, as one paragraph under the section's title."""
    return SectionView("toy", "Toy numbers",
                       (Para(line(f"baseline {section.baseline}, candidate {section.candidate}")),))
