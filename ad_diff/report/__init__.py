"""Reporters: pure ``render(result, verdict) -> str`` functions, chosen by :class:`ReportFormat`."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ad_diff.gate import Verdict
    from ad_diff.result import DiffResult

__all__ = ["ReportFormat"]


class ReportFormat(str, Enum):
    """Output formats for stdout."""

    terminal = "terminal"
    markdown = "markdown"
    json = "json"

    def to_reporter(self, color: bool = False) -> Callable[[DiffResult, Verdict], str]:
        """Return the render function of this format."""
        if self is ReportFormat.terminal:
            from ad_diff.report import terminal

            return lambda r, v: terminal.render(r, v, color=color)
        if self is ReportFormat.markdown:
            from ad_diff.report import markdown

            return markdown.render
        if self is ReportFormat.json:
            from ad_diff.report import json as json_report

            return json_report.render
        raise AssertionError(f"unhandled format {self}")  # pragma: no cover
