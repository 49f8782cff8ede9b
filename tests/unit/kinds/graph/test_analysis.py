"""Graph analysis end to end on two-run scenarios (synthetic here; generated scenario fixtures when present):
what it measures, and the findings the rules draw from the measurement."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from ad_diff.core.jsonable import to_jsonable
from ad_diff.core.model import Category, Finding, Severity, State
from ad_diff.kinds.graph.analysis import analyze_graphs
from ad_diff.kinds.graph.classify import classify
from ad_diff.kinds.graph.diff import GraphAnalysis, HintKind
from ad_diff.kinds.graph.evidence import attach, hints_for_match_loss
from ad_diff.kinds.graph.section import view
from ad_diff.kinds.log.model import RunLog
from tests.conftest import ROOT
from tests.unit.kinds.graph import scenarios as S
from tests.views import NO_CONTEXT, markdown, terminal


def findings(a: GraphAnalysis, lb: RunLog | None = None, lc: RunLog | None = None) -> list[Finding]:
    return sorted(classify(a, lb, lc), key=Finding.sort_key)


def codes(a: GraphAnalysis, lb: RunLog | None = None, lc: RunLog | None = None) -> list[str]:
    return sorted(f.code for f in findings(a, lb, lc))


def test_rename_only_yields_no_findings(tmp_path: Path) -> None:
    b, c = S.rename_only(tmp_path)
    a = analyze_graphs(b / "graphs", c / "graphs")
    assert findings(a) == []
    assert a.first_divergence is None
    assert a.only_candidate == ("post_export/cleanup_noop_slice",)
    last = a.transforms[-1]
    assert last.structure_equal
    assert not last.identical
    assert dict(last.pairs_by_kind).get("renamed", 0) > 0
    assert a.transforms[0].identical
    json.dumps(to_jsonable(a))


def test_fusion_one_layer(tmp_path: Path) -> None:
    b, c = S.fusion_one_layer(tmp_path)
    a = analyze_graphs(b / "graphs", c / "graphs")
    assert a.first_divergence == "post_load_fusion/fuse_rmsnorm"
    (first,) = findings(a)  # the regions are the first divergence's evidence, not a warning of their own
    assert first.code == "ADG004"
    assert dict(first.evidence)["graph_regions"]["count"] == 2
    d = a.transforms[-1]
    assert len(d.regions) == 2
    assert d.new_regions == (0, 1)
    md = markdown(view(a, NO_CONTEXT))
    assert "<details>" in md
    assert "```diff" in md
    assert "- %torch_rmsnorm" in md
    assert "+ %pow_1" in md
    # The upstream dumps were byte-identical: the hint says so instead of inventing a cause.
    assert [h.kind for h in d.hints] == [HintKind.NO_UPSTREAM_DIFFERENCE]


def test_metadata_loss_then_match_loss_linked_by_hint(tmp_path: Path) -> None:
    b, c, lb, lc = S.metadata_loss(tmp_path)
    a = analyze_graphs(b / "graphs", c / "graphs", lb, lc)
    lost = [f for f in findings(a, lb, lc) if f.code == "ADG001"]
    assert len(lost) == 1
    assert lost[0].transform == "fuse_rmsnorm"
    assert lost[0].severity is Severity.ERROR
    ev = dict(lost[0].evidence)
    assert ev["coverage_candidate_before"]["nodes"] == 1.0
    assert ev["coverage_candidate_after"]["nodes"] < 1.0
    assert len(ev["nodes"]) == 7
    hints = hints_for_match_loss(a, "post_load_fusion", "fuse_rmsnorm_quant")
    assert [(h.kind, h.cause_transform) for h in hints] == [(HintKind.METADATA_LOST_UPSTREAM, "fuse_rmsnorm")]
    assert len(hints[0].nodes) == 7
    assert hints_for_match_loss(a, "post_load_fusion", "fuse_rmsnorm") == []
    ml = Finding(
        "ADL001",
        Category.MATCH_LOSS,
        Severity.ERROR,
        "lost",
        transform="fuse_rmsnorm_quant",
        stage="post_load_fusion",
    )
    (linked,) = attach((ml,), a)
    assert dict(linked.evidence)["root_cause"][0]["cause_transform"] == "fuse_rmsnorm"


def test_op_form_change_hint(tmp_path: Path) -> None:
    b, c, lb, lc = S.op_form_change(tmp_path)
    a = analyze_graphs(b / "graphs", c / "graphs", lb, lc)
    assert a.first_divergence == "post_export/canonicalize_split"
    (h,) = hints_for_match_loss(a, "pattern_matcher", "match_rope_pattern")
    assert h.kind is HintKind.OP_FORM_CHANGED_UPSTREAM
    assert h.cause_transform == "canonicalize_split"
    assert "split_with_sizes -> getitem" in h.message
    assert "narrow -> contiguous -> view" in h.message
    assert "root-cause hint" in markdown(view(a, NO_CONTEXT))


def test_consistency_between_log_and_dumps(tmp_path: Path) -> None:
    b, c, lb, lc = S.op_form_change(tmp_path)
    # The candidate claims canonicalize_split did nothing although its dump changed the graph.
    recs = list(lc.transforms)
    recs[1] = replace(recs[1], state=State.SKIPPED, matches=None)
    lc = replace(lc, transforms=tuple(recs))
    a = analyze_graphs(b / "graphs", c / "graphs", lb, lc)
    adg7 = [f for f in findings(a, lb, lc) if f.code == "ADG007"]
    assert len(adg7) == 1
    assert adg7[0].transform == "canonicalize_split"
    assert "candidate" in adg7[0].message


def test_matches_logged_but_graph_unchanged_is_a_conflict_in_a_graph_stage(tmp_path: Path) -> None:
    b, c, lb, lc = S.op_form_change(tmp_path)
    recs = list(lb.transforms)
    recs[1] = replace(recs[1], state=State.APPLIED, matches=4)  # post_export: a match must rewrite the graph
    lb = replace(lb, transforms=tuple(recs))
    a = analyze_graphs(b / "graphs", c / "graphs", lb, lc)
    (conflict,) = [f for f in findings(a, lb, lc) if f.code in ("ADG008", "ADG012")]
    assert (conflict.code, conflict.transform, conflict.severity) == (
        "ADG012",
        "canonicalize_split",
        Severity.ERROR,
    )
    assert "baseline" in conflict.message


def test_unreadable_dump_is_measured_then_a_finding_not_a_crash(tmp_path: Path) -> None:
    b, c = S.fusion_one_layer(tmp_path)
    bad = sorted((c / "graphs").iterdir())[-1]
    bad.write_text(bad.read_text("utf-8") + "garbage\n", "utf-8")
    a = analyze_graphs(b / "graphs", c / "graphs")
    (u,) = a.unreadable
    assert (u.run, u.transform) == ("candidate", "fuse_rmsnorm")
    (f,) = [f for f in findings(a) if f.code == "ADG009"]
    assert bad.name in f.message
    assert "expected an SSA line" in f.message
    assert a.transforms[-1].candidate_file is None


def test_terminal_render(tmp_path: Path) -> None:
    from rich.console import Console

    b, c = S.fusion_one_layer(tmp_path)
    console = Console(record=True, width=200)
    console.print(terminal(view(analyze_graphs(b / "graphs", c / "graphs"), NO_CONTEXT)))
    out = console.export_text()
    assert "post_load_fusion/fuse_rmsnorm" in out
    assert "region" in out


HOSTILE = "fuse|rms`norm`<b>*x*[y](z)"
"""A transform name with every character that means something in markdown (dump headers are free text)."""


def _unescaped(line: str, ch: str) -> int:
    """Occurrences of ``ch`` in ``line`` that no backslash escapes."""
    n, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        n += line[i] == ch
        i += 1
    return n


def _outside_fences(md: str) -> list[str]:
    """The lines of ``md`` that are not inside a fenced code block (the region snippets)."""
    out, fence = [], ""
    for ln in md.splitlines():
        if fence:
            fence = "" if ln == fence else fence
        elif ln.startswith("```"):
            fence = ln[: len(ln) - len(ln.lstrip("`"))]
        else:
            out.append(ln)
    return out


def test_markdown_escapes_names(tmp_path: Path) -> None:
    b, c = S.fusion_one_layer(tmp_path)
    for run in (b, c):  # give the fusing transform a hostile name in both runs' dump headers
        dump = sorted((run / "graphs").iterdir())[-1]
        text = dump.read_text("utf-8")
        dump.write_text(text.replace("# Transform: fuse_rmsnorm", f"# Transform: {HOSTILE}"), "utf-8")
    md = markdown(view(analyze_graphs(b / "graphs", c / "graphs"), NO_CONTEXT))
    assert HOSTILE not in md  # never verbatim
    # Headings and prose name it in a code span whose fence is longer than its backtick runs, with the pipe
    # escaped (GFM splits table cells before it reads code spans).
    assert md.count("``post_load_fusion/fuse\\|rms`norm`<b>*x*[y](z)``") == 2
    # Table cells name it in <code> with every markdown and HTML character an entity, so it can neither split
    # the cell nor open a tag.
    rows = [ln for ln in md.splitlines() if ln.startswith("| <code>")]
    assert len(rows) == 1
    assert rows[0].startswith(
        "| <code>fuse&#124;rms&#96;norm&#96;&#60;b&#62;&#42;x&#42;&#91;y&#93;(z)</code> |"
    )
    assert all(_unescaped(r, "|") == 5 for r in rows), rows  # 4 cells: the name splits none
    # Outside code spans (the hint's prose) every markdown character is escaped and '<' is an entity.
    prose = [re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", ln) for ln in _outside_fences(md)]
    bad = [ln for ln in prose if any(_unescaped(ln, ch) for ch in "*[`") or "<b>" in ln]
    assert bad == []
    # Backtick pairs in a message read as code spans (ad-diff writes op names that way): the piece between
    # them is a code span, everything around it is escaped.
    assert "fuse\\|rms`norm`&lt;b>\\*x\\*\\[y\\](z)" in md


@pytest.mark.parametrize(
    "name", ["rename_only", "fusion_one_layer", "metadata_loss", "op_form_change", "dump_d1", "dump_d2"]
)
def test_generated_scenarios(name: str) -> None:
    root = ROOT / "fixtures" / "scenarios" / name
    assert (root / "baseline" / "graphs").is_dir(), f"fixture {name} missing: run scripts/make_fixtures.py"
    a = analyze_graphs(root / "baseline" / "graphs", root / "candidate" / "graphs")
    json.dumps(to_jsonable(a), allow_nan=False)
    # what the scenario's manifest says the graphs show, and no metadata loss it does not name
    manifest = yaml.safe_load((ROOT / "fixtures/scenarios/manifest.yaml").read_text())["scenarios"][name]
    graph_kinds = {"metadata_loss", "structure_change", "shape_change"}
    want = {(f["category"], f["transform"]) for f in manifest["findings"] if f["category"] in graph_kinds}
    got = {(f.category.value, f.transform) for f in findings(a) if f.category.value in graph_kinds}
    assert want <= got
    assert {t for c, t in got if c == "metadata_loss"} == {t for c, t in want if c == "metadata_loss"}
    if name == "rename_only":
        assert [f for f in findings(a) if f.severity is not Severity.INFO] == []
    if name == "metadata_loss":
        assert "ADG001" in codes(a)


SCENARIOS = sorted(p.name for p in (ROOT / "fixtures" / "scenarios").iterdir()
                   if (p / "baseline" / "graphs").is_dir() and (p / "candidate" / "graphs").is_dir())


def test_scenarios_with_dumps_found() -> None:
    assert len(SCENARIOS) >= 15, SCENARIOS


@pytest.mark.parametrize("name", SCENARIOS)
def test_reuse_changes_nothing_on_the_scenarios(name: str) -> None:
    """Parsing each line once, reusing whole parses, node tables, coverage and alignments (``reuse=True``)
    measures exactly what parsing and aligning every dump afresh does, region snippets and hints included."""
    root = ROOT / "fixtures" / "scenarios" / name
    logs = [_log(root / run) for run in ("baseline", "candidate")]
    fast = analyze_graphs(root / "baseline" / "graphs", root / "candidate" / "graphs", *logs)
    slow = analyze_graphs(root / "baseline" / "graphs", root / "candidate" / "graphs", *logs, reuse=False)
    assert fast == slow
    assert to_jsonable(fast) == to_jsonable(slow)
    assert [[(r.baseline_lines, r.candidate_lines) for r in d.regions] for d in fast.transforms] == \
        [[(r.baseline_lines, r.candidate_lines) for r in d.regions] for d in slow.transforms]


def _log(run: Path) -> RunLog | None:
    from ad_diff.errors import AdDiffError
    from ad_diff.kinds.log import parse as log_parser

    logs = sorted(run.glob("*.log"))
    try:
        return log_parser.parse(logs[0]) if logs else None
    except AdDiffError:
        return None
