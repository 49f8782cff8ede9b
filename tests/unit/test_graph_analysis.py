"""Graph analysis end to end on two-run scenarios (synthetic here; generated scenario fixtures when present)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ad_diff.core.model import Finding, Severity, State
from ad_diff.kinds.graph.analysis import analyze_graphs, attach_hints, hints_for_match_loss
from ad_diff.kinds.graph.section import render_markdown, render_terminal
from tests.unit import graph_scenarios as S

ROOT = Path(__file__).resolve().parents[2]


def codes(a) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(f.code for f in a.findings)


def test_rename_only_yields_no_findings(tmp_path: Path) -> None:
    b, c = S.rename_only(tmp_path)
    a = analyze_graphs(b / "graphs", c / "graphs")
    assert a.findings == ()
    assert a.first_divergence is None
    assert a.only_candidate == ("post_export/cleanup_noop_slice",)
    last = a.transforms[-1]
    assert last.structure_equal and not last.identical
    assert dict(last.pairs_by_kind).get("renamed", 0) > 0
    assert a.transforms[0].identical
    json.dumps(a.to_json())


def test_fusion_one_layer(tmp_path: Path) -> None:
    b, c = S.fusion_one_layer(tmp_path)
    a = analyze_graphs(b / "graphs", c / "graphs")
    assert a.first_divergence == "post_load_fusion/fuse_rmsnorm"
    assert codes(a) == ["ADG004", "ADG005"]
    d = a.transforms[-1]
    assert len(d.regions) == 2 and d.new_regions == (0, 1)
    md = render_markdown(a)
    assert "<details>" in md and "```diff" in md and "- %torch_rmsnorm" in md and "+ %pow_1" in md
    # The upstream dumps were byte-identical: the hint says so instead of inventing a cause.
    assert [h.kind for h in d.hints] == ["no_upstream_difference"]


def test_metadata_loss_then_match_loss_linked_by_hint(tmp_path: Path) -> None:
    b, c, lb, lc = S.metadata_loss(tmp_path)
    a = analyze_graphs(b / "graphs", c / "graphs", lb, lc)
    lost = [f for f in a.findings if f.code == "ADG001"]
    assert len(lost) == 1 and lost[0].transform == "fuse_rmsnorm" and lost[0].severity is Severity.ERROR
    ev = dict(lost[0].evidence)
    assert ev["coverage_candidate_before"]["nodes"] == 1.0 and ev["coverage_candidate_after"]["nodes"] < 1.0
    assert len(ev["nodes"]) == 7
    hints = hints_for_match_loss(a, "post_load_fusion", "fuse_rmsnorm_quant")
    assert [(h.kind, h.cause_transform) for h in hints] == [("metadata_lost_upstream", "fuse_rmsnorm")]
    assert len(hints[0].nodes) == 7
    assert hints_for_match_loss(a, "post_load_fusion", "fuse_rmsnorm") == []
    ml = Finding("ADL001", "match_loss", Severity.ERROR, "lost", transform="fuse_rmsnorm_quant",
                 stage="post_load_fusion")
    (linked,) = attach_hints((ml,), a)
    assert dict(linked.evidence)["root_cause"][0]["cause_transform"] == "fuse_rmsnorm"


def test_op_form_change_hint(tmp_path: Path) -> None:
    b, c, lb, lc = S.op_form_change(tmp_path)
    a = analyze_graphs(b / "graphs", c / "graphs", lb, lc)
    assert a.first_divergence == "post_export/canonicalize_split"
    (h,) = hints_for_match_loss(a, "pattern_matcher", "match_rope_pattern")
    assert h.kind == "op_form_changed_upstream" and h.cause_transform == "canonicalize_split"
    assert "split_with_sizes -> getitem" in h.message and "narrow -> contiguous -> view" in h.message
    assert "root-cause hint" in render_markdown(a)


def test_consistency_between_log_and_dumps(tmp_path: Path) -> None:
    b, c, lb, lc = S.op_form_change(tmp_path)
    # The candidate claims canonicalize_split did nothing although its dump changed the graph.
    recs = list(lc.transforms)
    recs[1] = type(recs[1])(recs[1].stage, recs[1].transform, 0, State.SKIPPED, None, 2)
    from dataclasses import replace

    a = analyze_graphs(b / "graphs", c / "graphs", lb, replace(lc, transforms=tuple(recs)))
    adg7 = [f for f in a.findings if f.code == "ADG007"]
    assert len(adg7) == 1 and adg7[0].transform == "canonicalize_split" and "candidate" in adg7[0].message


def test_matches_logged_but_graph_unchanged(tmp_path: Path) -> None:
    b, c, lb, lc = S.op_form_change(tmp_path)
    recs = list(lb.transforms)
    recs[1] = type(recs[1])(recs[1].stage, recs[1].transform, 0, State.APPLIED, 4, 2)
    from dataclasses import replace

    a = analyze_graphs(b / "graphs", c / "graphs", replace(lb, transforms=tuple(recs)), lc)
    assert [f.transform for f in a.findings if f.code == "ADG008"] == ["canonicalize_split"]


def test_unreadable_dump_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    b, c = S.fusion_one_layer(tmp_path)
    bad = sorted((c / "graphs").iterdir())[-1]
    bad.write_text(bad.read_text("utf-8") + "garbage\n", "utf-8")
    a = analyze_graphs(b / "graphs", c / "graphs")
    (f,) = [f for f in a.findings if f.code == "ADG009"]
    assert bad.name in f.message and "expected an SSA line" in f.message
    assert a.transforms[-1].candidate_file is None


def test_terminal_render(tmp_path: Path) -> None:
    from rich.console import Console

    b, c = S.fusion_one_layer(tmp_path)
    console = Console(record=True, width=200)
    console.print(render_terminal(analyze_graphs(b / "graphs", c / "graphs")))
    out = console.export_text()
    assert "post_load_fusion/fuse_rmsnorm" in out and "region" in out


def test_markdown_escapes_names(tmp_path: Path) -> None:
    b, c = S.fusion_one_layer(tmp_path)
    md = render_markdown(analyze_graphs(b / "graphs", c / "graphs"))
    assert "| <code>fuse_rmsnorm</code> |" in md  # a narrow cell: the stage is in the JSON


@pytest.mark.parametrize("name", ["rename_only", "fusion_one_layer", "metadata_loss", "op_form_change", "dump_d1",
                                  "dump_d2"])
def test_generated_scenarios(name: str) -> None:
    root = ROOT / "fixtures" / "scenarios" / name
    assert (root / "baseline" / "graphs").is_dir(), f"scenario fixture {name} missing: run scripts/make_fixtures.py"
    a = analyze_graphs(root / "baseline" / "graphs", root / "candidate" / "graphs")
    json.dumps(a.to_json())
    if name == "rename_only":
        assert a.findings == ()
    if name == "metadata_loss":
        assert "ADG001" in codes(a)
