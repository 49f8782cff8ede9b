"""Fixtures shared by the history tests."""

from __future__ import annotations

import pytest

from ad_diff.history import run_history
from ad_diff.history.model import History
from tests.unit.history.scenario import scenario


@pytest.fixture(scope="session")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """The scenario history (collapse, partial loss, new matches, a flaky transform), read once per session:
    the render and JSON tests only read it."""
    return run_history(scenario(tmp_path_factory.mktemp("r") / "h"))
