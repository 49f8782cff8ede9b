"""Reporters: pure functions of a result, chosen by one :class:`Format` enum (the only dispatcher).

``Format.render(result, verdict)`` returns the text of one format for a single comparison
(:class:`~ad_diff.result.DiffResult`) or a batch (:class:`~ad_diff.result.BatchResult`); the CLI writes it.
Every format module is imported lazily, so ``--help`` and a terminal report never load the others.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # typing_extensions costs ~10 ms of start-up where typing has it
    from typing_extensions import assert_never

if TYPE_CHECKING:
    from ad_diff.gate import Verdict
    from ad_diff.result import BatchResult, DiffResult

__all__ = ["COMMENT_LIMIT", "STEP_SUMMARY_LIMIT", "Format", "ReportFormat", "fit_bytes"]

COMMENT_LIMIT = 65_536
"""GitHub's maximum comment body length (characters). Here, not in ``markdown``, so that the CLI's option
defaults do not import the markdown reporter (and with it every kind) for ``--help``."""
STEP_SUMMARY_LIMIT = 1024 * 1024
"""GitHub's limit for ``$GITHUB_STEP_SUMMARY`` (bytes)."""


class Format(str, Enum):
    """Every report ad-diff writes."""

    terminal = "terminal"
    markdown = "markdown"
    json = "json"
    junit = "junit"
    step_summary = "step_summary"
    """The markdown report, appended to GitHub's step summary (capped at 1 MiB)."""
    html = "html"
    """The standalone HTML report (one self-contained file; a batch's summary page)."""

    def render(self, result: DiffResult | BatchResult, verdict: Verdict | None, *, color: bool = False,
               comment_limit: int | None = None, width: int | None = None) -> str:
        """This format's text of ``result`` (a ``DiffResult`` with its ``verdict``, or a ``BatchResult``);
        ``width`` is the terminal report's (default 120 columns)."""
        # lazy: only the format written is loaded
        from ad_diff.result import BatchResult

        if isinstance(result, BatchResult):
            return self._batch(result, color, comment_limit, width)
        assert verdict is not None
        if self is Format.terminal:
            # lazy: only the format written is loaded
            from ad_diff.report import terminal

            return terminal.render(result, verdict, color=color, width=width or terminal.DEFAULT_WIDTH)
        if self is Format.markdown:
            # lazy: only the format written is loaded
            from ad_diff.report import markdown

            return markdown.render(result, verdict, **_limit(comment_limit))
        if self is Format.json:
            # lazy: only the format written is loaded
            from ad_diff.report import json

            return json.render(result, verdict)
        if self is Format.junit:
            # lazy: only the format written is loaded
            from ad_diff.report import junit

            return junit.render(result, verdict)
        if self is Format.step_summary:
            # lazy: only the format written is loaded
            from ad_diff.report import markdown

            return fit_bytes(lambda n: markdown.render(result, verdict, limit=n), STEP_SUMMARY_LIMIT)
        if self is Format.html:
            # lazy: only the format written is loaded
            from ad_diff.report import html

            return html.render(result, verdict)
        assert_never(self)

    def _batch(self, result: BatchResult, color: bool, comment_limit: int | None, width: int | None) -> str:
        # lazy: only the format written is loaded
        from ad_diff.report import batch

        if self is Format.terminal:
            return batch.render_terminal(result, color=color, width=width or batch.DEFAULT_WIDTH)
        if self is Format.markdown:
            return batch.render_markdown(result, **_limit(comment_limit))
        if self is Format.json:
            return batch.render_json(result)
        if self is Format.junit:
            # lazy: only the format written is loaded
            from ad_diff.report import junit

            return junit.render_batch(result)
        if self is Format.step_summary:
            return fit_bytes(lambda n: batch.render_markdown(result, n), STEP_SUMMARY_LIMIT)
        if self is Format.html:
            # lazy: only the format written is loaded
            from ad_diff.report import html

            return html.render_batch(result)
        assert_never(self)


class ReportFormat(str, Enum):
    """The formats ``--format`` may print on stdout (each is also a :class:`Format`)."""

    terminal = "terminal"
    markdown = "markdown"
    json = "json"

    @property
    def renderer(self) -> Format:
        """The :class:`Format` that renders it."""
        return Format(self.value)


def _limit(comment_limit: int | None) -> dict[str, int]:
    return {} if comment_limit is None else {"limit": comment_limit}


def fit_bytes(render: Callable[[int], str], limit_bytes: int) -> str:
    """Render with a character limit, shrinking it until the UTF-8 size fits ``limit_bytes``."""
    limit = limit_bytes
    text = render(limit)
    while len(text.encode("utf-8")) > limit_bytes and limit > 1000:
        limit -= len(text.encode("utf-8")) - limit_bytes + 256
        text = render(limit)
    return text
