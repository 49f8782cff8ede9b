"""The log reader maps every form to the same facts (issue 40): a transform's own lines are its facts, however
the format attributes them; claimed lines are no facts; debug lines never are; cache lines are events; a
result that names no transform is named from the dumps, the other run and the config."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ad_diff.core.model import State
from ad_diff.core.runlog import Cache, EventKind, Restore
from ad_diff.kinds.log import parse
from ad_diff.kinds.log.attribute import name_results
from ad_diff.kinds.log.events import read_event

P = "[stage=sharding, transform=detect_sharding]"
Q = "[stage=pattern_matcher, transform=match_x]"


def _log(tmp: Path, lines: list[str]) -> Path:
    path = tmp / "ad.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _said(tmp: Path, lines: list[str]) -> dict[str, tuple[tuple[str, int], ...]]:
    return {r.transform: r.said for r in parse.parse(_log(tmp, lines)).transforms}


V3 = [f"[AUTO-DEPLOY] [INFO] [RANK 0] {Q} [PRE-CLEANUP] graph canonicalization",
      f"[AUTO-DEPLOY] [INFO] [RANK 0] {Q} [APPLY] applying transform...",
      f"[AUTO-DEPLOY] [INFO] [RANK 0] {Q} [APPLY] Found 4 patterns",
      f"[AUTO-DEPLOY] [DEBUG] [RANK 0] {Q} [APPLY] tried node add_3",
      f"[AUTO-DEPLOY] [INFO] [RANK 0] {Q} [CUDA MEM DIFF (EXPECTED)] free:  1.00GB | resv:   1.00GB",
      f"[AUTO-DEPLOY] [INFO] [RANK 0] {Q} [SUMMARY] matches=4 | time: 0.1s (pre=0.0s, apply=0.1s, post=0.0s)"]
V1 = [f"[02/10/2026-11:02:15] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {Q} running pre-cleanup (no shape_prop)",
      "[02/10/2026-11:02:15] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] Found 4 patterns",
      "[02/10/2026-11:02:15] [TRT-LLM AUTO-DEPLOY] [RANK 0] [V] tried node add_3",
      f"[02/10/2026-11:02:15] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {Q} enabled=True, num_matches=4, "
      "is_clean=False, has_valid_shapes=False"]
V0 = ["[02/10/2026-11:02:15] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] Found 4 patterns",
      "[02/10/2026-11:02:15] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] stage=pattern_matcher, transform=match_x, "
      "num_matches=4, is_clean=False, has_valid_shapes=False"]


@pytest.mark.parametrize("lines", [V3, V1, V0], ids=["V3-context", "V1-by-start", "V0-by-result"])
def test_a_transforms_own_line_is_its_fact_whatever_the_format(tmp_path: Path, lines: list[str]) -> None:
    """Context (V3), the start marker (V1) or the result that follows (V0) attribute it: the same fact."""
    assert _said(tmp_path, lines) == {"match_x": (("info Found 4 patterns", 1),)}


def test_claimed_lines_and_debug_lines_are_no_facts(tmp_path: Path) -> None:
    said = _said(tmp_path, V3)["match_x"]
    assert all("CUDA MEM" not in t and "tried node" not in t and "applying" not in t for t, _ in said)


def test_a_line_between_transforms_belongs_to_none(tmp_path: Path) -> None:
    lines = ["[AUTO-DEPLOY] [INFO] [RANK 0] Loading weights for 2 layers", *V3]
    assert _said(tmp_path, lines) == {"match_x": (("info Found 4 patterns", 1),)}


def test_an_l2_transform_is_pending_and_its_lines_are_its_own(tmp_path: Path) -> None:
    """L2 prints no context: a start marker opens an anonymous transform, its lines and its failure are its
    own, and a log that stops inside it stops inside a transform."""
    lines = ["[AUTO-DEPLOY] [INFO] [PRE-CLEANUP] graph canonicalization",
             "[AUTO-DEPLOY] [INFO] applying transform...",
             "[AUTO-DEPLOY] [INFO] Found 4 patterns",
             "[AUTO-DEPLOY] [WARNING] Transform match_x failed: RuntimeError: boom",
             "[AUTO-DEPLOY] [INFO] [SUMMARY] skipped | time: 0.1s (pre=0.0s, apply=0.1s, post=0.0s)",
             "[AUTO-DEPLOY] [INFO] [PRE-CLEANUP] graph canonicalization",
             "[AUTO-DEPLOY] [INFO] applying transform..."]
    log = parse.parse(_log(tmp_path, lines))
    first, second = log.transforms
    assert (first.transform, first.state, first.failure) == ("#1", State.FAILED, "RuntimeError: boom")
    assert first.said == (("info Found 4 patterns", 1),)
    assert second.state is State.INCOMPLETE
    assert log.end.value == "truncated"


@pytest.mark.parametrize(("msg", "kind"), [
    ("Saved AutoDeploy pipeline snapshot for 'x' to /c/r0", EventKind.SNAPSHOT_SAVED),
    ("[cache] Saved graph to /c/k/graph.pt", EventKind.CACHE_SAVED),
    ("[cache] Corrupt cache entry abc, rebuilding: EOFError", EventKind.CACHE_REBUILT),
    ("Pipeline snapshot manifest mismatch for 'x': key=1 != 2", EventKind.CACHE_REBUILT),
    ("[cache] Evicting abc (12 GB)", EventKind.CACHE_OTHER),
])
def test_cache_book_keeping_lines_are_events(msg: str, kind: EventKind) -> None:
    got = read_event(msg, 7, 0)
    assert got is not None
    assert getattr(got, "kind", None) is kind


def test_both_caches_restore_with_where_it_took_effect() -> None:
    pipe = read_event("Restored AutoDeploy pipeline snapshot for 'sharding_transform_executor' from /c", 3, 2)
    graph = read_event("[cache] Loaded graph from /c/k/graph.pt", 3, 1)
    assert isinstance(pipe, Restore)
    assert isinstance(graph, Restore)
    assert (pipe.cache, pipe.boundary, pipe.after) == (Cache.PIPELINE, "sharding_transform_executor", 2)
    assert (graph.cache, graph.boundary, graph.source) == (Cache.GRAPH, None, "/c/k/graph.pt")
    assert read_event("Found 4 patterns", 1, 0) is None


@pytest.mark.parametrize("prefix", ["[02/10/2026-11:02:15] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] ",
                                    "[AUTO-DEPLOY] [INFO] [RANK 0] ", "[AUTO-DEPLOY] [INFO] ", ""])
def test_a_graph_cache_line_restores_whatever_prints_it(tmp_path: Path, prefix: str) -> None:
    lines = [f"{prefix}[cache] Loaded graph from /cache/ad-graphs/9f/graph.pt",
             f"[AUTO-DEPLOY] [INFO] [RANK 0] {P} [SUMMARY] matches=0 | time: 0.1s (pre=0.0s, apply=0.1s, "
             "post=0.0s)"]
    log = parse.parse(_log(tmp_path, lines))
    restored = log.restored or next((rl.restored for rl in log.ranks if rl.restored), None)
    assert restored is not None
    assert restored.cache is Cache.GRAPH


def test_results_that_name_nothing_are_named_from_dumps_other_run_and_config(tmp_path: Path) -> None:
    pipeline = (("factory", "build_model"), ("export", "export_to_gm"), ("pattern_matcher", "match_x"))
    named = parse.parse(_log(tmp_path, [
        f"[AUTO-DEPLOY] [INFO] [RANK 0] [stage={s}, transform={t}] [SUMMARY] matches=1 | time: 0.1s "
        "(pre=0.0s, apply=0.1s, post=0.0s)" for s, t in pipeline]))
    (tmp_path / "l2").mkdir()
    anon = parse.parse(_log(tmp_path / "l2", [
        "[AUTO-DEPLOY] [INFO] [SUMMARY] matches=1 | time: 0.1s (pre=0.0s, apply=0.1s, post=0.0s)"] * 3))
    # the dumps name what had a graph (not build_model); the other run's pipeline names the rest
    got, notes = name_results(anon, [("export", "export_to_gm"), ("pattern_matcher", "match_x")], named)
    assert [r.transform for r in got.transforms] == ["build_model", "export_to_gm", "match_x"]
    assert notes
    # with no dumps and a differently long other run, the run's own config pipeline names them
    shorter = replace(named, transforms=named.transforms[:2], ranks=())
    got, _ = name_results(anon, None, shorter, pipeline)
    assert [r.transform for r in got.transforms] == ["build_model", "export_to_gm", "match_x"]
