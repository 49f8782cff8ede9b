"""A kind's section view drawn in the reports' media, for tests of one kind (no comparison needed)."""

from __future__ import annotations

from rich.console import RenderableType

from ad_diff.core.view import SectionView, ViewContext
from ad_diff.report import md_view, terminal_view

NO_CONTEXT = ViewContext()
"""A view's context when the report ignores nothing and wrote no HTML and no plots."""


def markdown(view: SectionView) -> str:
    """The section of the PR comment."""
    return md_view.section(view)


def terminal(view: SectionView) -> RenderableType:
    """The section of the terminal report (a rich renderable)."""
    return terminal_view.section(view)
