"""Progress bars only on a terminal outside CI; a no-op callback otherwise."""

from __future__ import annotations

import io

import pytest

from ad_diff.progress import no_progress, progress_bar, progress_enabled


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_enabled_only_on_a_tty_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    assert progress_enabled(None, Tty()) is True
    assert progress_enabled(None, io.StringIO()) is False  # piped
    monkeypatch.setenv("CI", "true")
    assert progress_enabled(None, Tty()) is False  # CI logs stay quiet
    assert progress_enabled(True, io.StringIO()) is True  # explicit wins


def test_disabled_bar_is_the_no_op() -> None:
    with progress_bar(False) as bar:
        assert bar is no_progress
        bar("x", 1, 2)


def test_enabled_bar_draws_each_task_with_its_counts() -> None:
    out = Tty()
    with progress_bar(True, stream=out) as bar:
        bar("parsing dumps", 0, 3)
        bar("parsing dumps", 3, 3)
        bar("unknown total", 1, None)
    drawn = out.getvalue()
    assert "parsing dumps" in drawn
    assert "3/3" in drawn
    assert "unknown total" in drawn
    assert "1/?" in drawn
