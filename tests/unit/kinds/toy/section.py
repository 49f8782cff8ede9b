"""The toy kind's section of the PR comment and of the terminal report."""

from __future__ import annotations

from rich.text import Text

from tests.unit.kinds.toy.model import ToyComparison


def render_markdown(section: ToyComparison) -> str:
    """One line: both numbers."""
    return f"### Toy numbers\n\nbaseline {section.baseline}, candidate {section.candidate}\n"


def render_terminal(section: ToyComparison) -> Text:
    """One line: both numbers."""
    return Text(f"toy numbers: baseline {section.baseline}, candidate {section.candidate}")
