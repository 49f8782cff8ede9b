"""Reporters: pure functions of a result, one module per format (terminal, markdown, json, junit, html, and
batch); :mod:`ad_diff.formats` is the one registry that chooses between them. This package's root holds what
the CLI's option defaults need without loading a reporter (``--help``).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["COMMENT_LIMIT", "STEP_SUMMARY_LIMIT", "fit_bytes"]

COMMENT_LIMIT = 65_536
"""GitHub's maximum comment body length (characters). Here, not in ``markdown``, so that the CLI's option
defaults do not import the markdown reporter (and with it every kind) for ``--help``."""
STEP_SUMMARY_LIMIT = 1024 * 1024
"""GitHub's limit for ``$GITHUB_STEP_SUMMARY`` (bytes)."""


def fit_bytes(render: Callable[[int], str], limit_bytes: int) -> str:
    """Render with a character limit, shrinking it until the UTF-8 size fits ``limit_bytes``."""
    limit = limit_bytes
    text = render(limit)
    while len(text.encode("utf-8")) > limit_bytes and limit > 1000:
        limit -= len(text.encode("utf-8")) - limit_bytes + 256
        text = render(limit)
    return text
