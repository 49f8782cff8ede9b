"""A rank of the config's world size that logged nothing (issue 27's silent passes): an incomplete run
that gates (ADL016), not only a world-size change; a capture of rank 0 alone in both runs is no finding."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

from ad_diff import gate, pipeline
from ad_diff.core.model import Category
from ad_diff.settings import Settings
from tests.conftest import make_run, v3

STEPS = (("export", "export_to_gm", "matches=1"), ("pattern_matcher", "match_rope_pattern", "matches=4"),
         ("compile", "compile_model", "matches=1"))


def _run(root: Path, world: int, ranks: tuple[int, ...]) -> Path:
    run = make_run(root, "".join(v3(s, t, r, rank) for s, t, r in STEPS for rank in ranks))
    cfg = f"world_size: {world}\ntransforms:\n  match_rope_pattern: {{enabled: true}}\n"
    (run / "model.yaml").write_text(cfg)
    return run


CASES = [(world, missing) for world in (2, 3, 4) for n in range(1, world)
         for missing in combinations(range(world), n)]


@pytest.mark.parametrize(("world", "missing"), CASES, ids=[f"{w}-{m}" for w, m in CASES])
def test_a_rank_that_logged_nothing_gates(tmp_path: Path, world: int, missing: tuple[int, ...]) -> None:
    base = _run(tmp_path / "b", world, tuple(range(world)))
    cand = _run(tmp_path / "c", world, tuple(r for r in range(world) if r not in missing))
    result = pipeline.run(Settings(baseline=base, candidate=cand))
    [f] = [f for f in result.findings if f.code == "ADL016"]
    assert f.category is Category.INCOMPLETE_RUN
    noun = "rank" if len(missing) == 1 else "ranks"
    assert f"{noun} {', '.join(map(str, missing))} logged none" in f.message
    assert f"world_size {world}" in f.message
    assert gate.decide(result.findings, "match_loss").exit_code == gate.EXIT_REGRESSION


def test_rank_zero_alone_in_both_runs_is_how_the_job_was_captured(tmp_path: Path) -> None:
    base, cand = _run(tmp_path / "b", 2, (0,)), _run(tmp_path / "c", 2, (0,))
    result = pipeline.run(Settings(baseline=base, candidate=cand))
    assert not [f for f in result.findings if f.code == "ADL016"]
    assert gate.decide(result.findings, "error").exit_code == gate.EXIT_OK


def test_every_rank_present_is_no_finding(tmp_path: Path) -> None:
    base, cand = _run(tmp_path / "b", 2, (0, 1)), _run(tmp_path / "c", 2, (0, 1))
    result = pipeline.run(Settings(baseline=base, candidate=cand))
    assert not [f for f in result.findings if f.code == "ADL016"]


def test_a_huge_world_size_costs_what_the_logs_hold(tmp_path: Path) -> None:
    """The work follows the logs, not the number the config writes: world_size 10**12 with two ranks logged
    names the first missing ranks and counts the rest, without enumerating them."""
    base = _run(tmp_path / "b", 10**12, (0, 1))
    cand = _run(tmp_path / "c", 10**12, (0, 1))
    result = pipeline.run(Settings(baseline=base, candidate=cand))
    [f] = [f for f in result.findings if f.code == "ADL016" and "candidate" in f.message]
    assert "ranks 2, 3, 4, 5, 6, 7, 8, 9 and 999999999990 more logged none" in f.message
