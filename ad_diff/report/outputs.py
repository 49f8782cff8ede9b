"""Every output a CI job asks for, rendered in one place: stdout, PR-comment markdown, JSON, JUnit XML and
the GitHub step summary. Pure: returns texts by kind; the CLI writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ad_diff.report import ReportFormat
from ad_diff.report.markdown import STEP_SUMMARY_LIMIT


def fit_bytes(render: Callable[[int], str], limit_bytes: int) -> str:
    """Render with a character limit, shrinking it until the UTF-8 size fits ``limit_bytes``."""
    limit = limit_bytes
    text = render(limit)
    while len(text.encode("utf-8")) > limit_bytes and limit > 1000:
        limit -= len(text.encode("utf-8")) - limit_bytes + 256
        text = render(limit)
    return text


def render_all(result: Any, verdict: Any, kinds: Iterable[str], fmt: ReportFormat, color: bool,
               comment_limit: int) -> dict[str, str]:
    """Texts for ``kinds`` (``stdout``, ``markdown``, ``json``, ``junit``, ``step_summary``).

    ``result`` is a :class:`~ad_diff.model.DiffResult` (with its ``verdict``) or a
    :class:`~ad_diff.batch.BatchResult` (``verdict`` unused).
    """
    from ad_diff.report import batch as batch_report
    from ad_diff.report import json as json_report
    from ad_diff.report import junit
    from ad_diff.report import markdown as md
    from ad_diff.workflows.batch import BatchResult

    if isinstance(result, BatchResult):
        stdout: dict[ReportFormat, Callable[[], str]] = {
            ReportFormat.terminal: lambda: batch_report.render_terminal(result, color=color),
            ReportFormat.markdown: lambda: batch_report.render_markdown(result, comment_limit),
            ReportFormat.json: lambda: batch_report.render_json(result),
        }
        renderers: dict[str, Callable[[], str]] = {
            "stdout": stdout[fmt],
            "markdown": lambda: batch_report.render_markdown(result, comment_limit),
            "json": lambda: batch_report.render_json(result),
            "junit": lambda: junit.render_batch(result),
            "step_summary": lambda: fit_bytes(lambda n: batch_report.render_markdown(result, n), STEP_SUMMARY_LIMIT),
        }
    else:
        renderers = {
            "stdout": lambda: fmt.to_reporter(color=color)(result, verdict),
            "markdown": lambda: md.render(result, verdict, limit=comment_limit),
            "json": lambda: json_report.render(result, verdict),
            "junit": lambda: junit.render(result, verdict),
            "step_summary": lambda: fit_bytes(lambda n: md.render(result, verdict, limit=n), STEP_SUMMARY_LIMIT),
        }
    return {k: renderers[k]() for k in kinds}
