"""pipeline.run: the cyclic GC is paused for the whole analysis and restored afterwards (issue 15 item 3)."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from ad_diff import pipeline
from ad_diff.errors import AdDiffError
from ad_diff.settings import Settings

SCEN = Path("fixtures/scenarios/metadata_loss")


@pytest.fixture
def gc_seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """``gc.isenabled()`` as seen by the explain stage (the last step of the analysis), once per run."""
    seen: list[bool] = []
    real = pipeline.explain

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "explain", spy)
    return seen


@pytest.fixture(autouse=True)
def _gc_restored() -> Any:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()


def test_gc_is_paused_during_the_analysis_and_restored(gc_seen: list[bool]) -> None:
    gc.enable()
    result = pipeline.run(Settings(SCEN / "baseline", SCEN / "candidate"))
    assert result.findings  # the analysis ran (the scenario loses metadata)
    assert gc_seen == [False]
    assert gc.isenabled()


def test_a_caller_that_disabled_gc_keeps_it_disabled(gc_seen: list[bool]) -> None:
    gc.disable()
    pipeline.run(Settings(SCEN / "baseline", SCEN / "candidate"))
    assert gc_seen == [False]
    assert not gc.isenabled()


def test_gc_is_restored_when_the_input_is_unusable(tmp_path: Path) -> None:
    gc.enable()
    with pytest.raises(AdDiffError):
        pipeline.run(Settings(tmp_path / "missing", tmp_path / "missing_too"))
    assert gc.isenabled()
