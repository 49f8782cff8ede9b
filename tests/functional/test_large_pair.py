"""The benchmark's large-pair generator at a small size: results are exactly what the generator injected, and
reusing parses/alignments of repeated graphs (the speed work) changes nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ad_diff.core.jsonable import to_jsonable
from ad_diff.kinds.graph.analysis import analyze_graphs
from ad_diff.kinds.graph.cache import DumpLoader
from ad_diff.kinds.log import parse as log_parser
from tests.conftest import ROOT, run_cli

sys.path.insert(0, str(ROOT / "scripts"))
from fixturegen.large import make_large_pair  # noqa: E402

LAYERS = 4


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 layers, every AD transform, ~300 nodes per dump, regression injected."""
    out = tmp_path_factory.mktemp("large")
    info = make_large_pair(out, layers=LAYERS, transforms=90, nodes_per_dump=200)
    assert info["files_per_run"] == 89
    return out


def test_findings_are_the_injected_regression(pair: Path) -> None:
    res = run_cli(pair / "baseline", pair / "candidate", "-f", "json")
    assert res.code == 1, res.err
    report = json.loads(res.out)
    assert report["verdict"] == "fail"
    got = sorted((f["code"], f["stage"], f["transform"]) for f in report["findings"])
    # One cause, reported once: the unfused norms appear as regions at match_rmsnorm_pattern, the transform
    # whose count dropped, and are its evidence; the regions they carry into later transforms (fuse_rmsnorm,
    # or match_swiglu_pattern, whose node counters they shift) are consequences, not warnings.
    assert got == [
        ("ADG004", "pattern_matcher", "match_rmsnorm_pattern"),  # first structural divergence
        ("ADL001", "pattern_matcher", "match_rmsnorm_pattern"),
        ("ADL001", "post_load_fusion", "fuse_rmsnorm"),
    ]
    regions = {f["transform"]: f["evidence"].get("graph_regions", {}).get("count")
               for f in report["findings"] if f["code"] == "ADL001"}
    assert regions == {"match_rmsnorm_pattern": 5, "fuse_rmsnorm": None}
    # the generator drops 4 of the 2*layers+1 RMSNorm matches (layers//2 .. layers//2+3, final norm included)
    losses = {f["transform"]: f["message"] for f in report["findings"] if f["code"] == "ADL001"}
    assert all(m.endswith(f"{2 * LAYERS + 1} -> 4") for m in losses.values()), losses
    graph = report["sections"]["graph"]
    assert graph["first_divergence"] == "pattern_matcher/match_rmsnorm_pattern"


def test_reuse_changes_nothing(pair: Path) -> None:
    b, c = pair / "baseline", pair / "candidate"
    blog, clog = log_parser.parse(b / "ad.log"), log_parser.parse(c / "ad.log")
    fast = analyze_graphs(b / "graphs", c / "graphs", blog, clog)
    slow = analyze_graphs(b / "graphs", c / "graphs", blog, clog, reuse=False)
    assert fast == slow
    assert to_jsonable(fast) == to_jsonable(slow)


def test_loader_parses_each_distinct_body_once(pair: Path) -> None:
    files = sorted((pair / "baseline" / "graphs").iterdir())
    loader = DumpLoader()
    from ad_diff.kinds.graph.pair import list_dumps

    refs, _ = list_dumps(pair / "baseline" / "graphs")
    digests = [loader.load(r).digest for r in refs]
    assert len(refs) == len(files)
    # export, rmsnorm matched, swiglu matched, rmsnorm fused: four distinct graphs in 89 files
    assert loader.parsed == len(set(digests)) == 4
    again = DumpLoader(reuse=False)
    for r in refs[:3]:
        fresh, reused = again.load(r).dump, DumpLoader().load(r).dump
        assert fresh == reused
    # a reused parse carries its own file's header, path and counter (the last two dumps hold the same graph)
    two = DumpLoader()
    two.load(refs[-2])
    last = two.load(refs[-1]).dump
    assert two.parsed == 1
    assert last == DumpLoader(reuse=False).load(refs[-1]).dump
    assert last is not None
    assert (last.path, last.transform, last.counter) == (refs[-1].path, refs[-1].transform, 89)


def test_the_analysis_holds_one_pair_of_graphs(pair: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a pair of dumps is aligned, every parsed node alive belongs to one of its two graphs: the runs'
    previous dumps, what changed since them and the parser's memo of older bodies are let go before."""
    import gc

    from ad_diff.kinds.graph import align
    from ad_diff.kinds.graph.model import GraphNode

    seen: list[tuple[int, int]] = []
    chain = align.match_chain

    def checked(al: align.SectionAlignment) -> None:
        pair_nodes = set(map(id, al.b.section.nodes)) | set(map(id, al.c.section.nodes))
        alive = {id(o) for o in gc.get_objects() if type(o) is GraphNode}
        seen.append((len(alive - pair_nodes), len(pair_nodes)))
        chain(al)

    monkeypatch.setattr(align, "match_chain", checked)
    b, c = pair / "baseline", pair / "candidate"
    analyze_graphs(b / "graphs", c / "graphs", log_parser.parse(b / "ad.log"), log_parser.parse(c / "ad.log"))
    assert len(seen) >= 3, seen  # several pairs differ, at several graph sizes
    assert [extra for extra, _ in seen] == [0] * len(seen), seen


@pytest.mark.parametrize("size", [1, 2, 3])
def test_the_loader_memo_holds_the_lines_of_the_graphs_it_keeps(pair: Path, size: int) -> None:
    from ad_diff.kinds.graph.pair import list_dumps

    loader = DumpLoader(size)
    refs = [r for run in ("baseline", "candidate") for r in list_dumps(pair / run / "graphs")[0]]
    for r in sorted(refs, key=lambda r: (r.counter, str(r.path))):  # the runs alternately, as the analysis
        loader.load(r)
        assert loader.memo is not None
        held = {id(n) for d in loader.cache.values() for s in d.sections for n in s.nodes}
        memo = {id(n) for body in (*loader.memo.sources(False), *loader.memo.sources(True))
                for n in body.values() if n is not None}
        assert memo <= held
        assert len(loader.memo.sources(False)) + len(loader.memo.sources(True)) <= len(loader.cache)
