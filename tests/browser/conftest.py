"""Print where the browser tests left their screenshots (the artifacts a reviewer looks at)."""

from __future__ import annotations

from typing import Any

from tests.browser import comment
from tests.conftest import ROOT


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line naming the screenshot folder, when a browser test ran."""
    if any(
        r.nodeid.startswith("tests/browser/") and r.when == "call"
        for rs in terminalreporter.stats.values()
        for r in rs
        if hasattr(r, "nodeid")
    ):
        where = comment.artifacts_dir(ROOT)
        terminalreporter.write_line(f"Browser screenshots (PR comment at 780 px, HTML reports): {where}")
