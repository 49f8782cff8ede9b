"""The rules stage of the graph kind on small synthetic runs: what gates, what is evidence, what is neither.

Pipeline-cache restores, dump folders cut short, log/dump conflicts, regions explained by a count change,
moved transforms and metadata lost on unaligned nodes.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from ad_diff.core.model import CANDIDATE, Category, Finding, Severity, Side, State, TransformComparison
from ad_diff.discover.dumps import scan
from ad_diff.kinds.graph.analysis import analyze_graphs
from ad_diff.kinds.graph.classify import classify, folder_findings
from ad_diff.kinds.graph.diff import Absence, GraphAnalysis
from ad_diff.kinds.graph.evidence import attach
from ad_diff.kinds.graph.section import view
from ad_diff.kinds.log.model import LogEnd, Restore, RunLog
from scripts.synth_dumps import Spec, write_run
from tests.unit.kinds.graph.scenarios import FUSED, UNFUSED, make_log
from tests.views import NO_CONTEXT, markdown

A = State.APPLIED
STEPS = [("export", "export_to_gm"), ("post_export", "cleanup_noop_slice"),
         ("sharding", "sharding_transform_executor"), ("post_load_fusion", "fuse_rmsnorm"),
         ("compile", "compile_model")]
SPECS = [UNFUSED, UNFUSED, UNFUSED, FUSED, FUSED]
COUNTS = [1, 0, 0, 7, 0]
"""Match counts that fit the dumps (a transform that leaves the graph as it was matched nothing)."""


def _log(path: Path, keep: list[int], end: State | None = None) -> RunLog:
    """A log of the STEPS with indices ``keep`` (the last one ``end`` instead of applied, when given)."""
    steps = [(*STEPS[k], A, COUNTS[k]) for k in keep]
    if end is not None:
        steps[-1] = (*STEPS[keep[-1]], end, None)
    return make_log(path, steps)


def _full(root: Path, name: str) -> tuple[Path, RunLog]:
    run = root / name
    write_run(run, [(*s, spec) for s, spec in zip(STEPS, SPECS, strict=True)])
    return run, _log(run / "ad.log", list(range(5)))


def _codes(fs: list[Finding]) -> list[str]:
    return sorted(f.code for f in fs)


def _analyse(b: Path, c: Path, lb: RunLog, lc: RunLog) -> tuple[GraphAnalysis, list[Finding]]:
    a = analyze_graphs(b / "graphs", c / "graphs", lb, lc)
    return a, classify(a, lb, lc)


def test_restored_dumps_are_restored_not_compared(tmp_path: Path) -> None:
    """The candidate restored the pipeline cache at sharding_transform_executor: it has no dumps (and no log
    lines) for the transforms up to the boundary, and its numbering restarts at 001."""
    b, lb = _full(tmp_path, "baseline")
    c = tmp_path / "candidate"
    write_run(c, [(*s, spec) for s, spec in zip(STEPS[3:], SPECS[3:], strict=True)])
    assert sorted(p.name for p in (c / "graphs").iterdir())[0].startswith("001_post_load_fusion")
    lc = replace(_log(c / "ad.log", [3, 4]), restored=Restore("sharding_transform_executor", "/cache/abc", 3))
    a, fs = _analyse(b, c, lb, lc)
    assert [(d.transform, d.missing) for d in a.transforms[:3]] == [
        (t, Absence.RESTORED) for _, t in STEPS[:3]]
    assert a.only_baseline == ()
    assert a.transforms[3].two_sided
    assert fs == []  # never lost, never one-sided, never a gap
    assert folder_findings(scan(c / "graphs"), CANDIDATE) == []
    md = markdown(view(a, NO_CONTEXT))
    assert "only in the baseline" not in md
    assert "Restored in the candidate (not compared" in md


def test_restore_boundary_not_among_the_dumps(tmp_path: Path) -> None:
    b, lb = _full(tmp_path, "baseline")
    c = tmp_path / "candidate"
    write_run(c, [(*s, spec) for s, spec in zip(STEPS[3:], SPECS[3:], strict=True)])
    lc = replace(_log(c / "ad.log", [3, 4]), restored=Restore("a_boundary_without_dump", "/cache/abc", 3))
    a, fs = _analyse(b, c, lb, lc)
    assert {d.missing for d in a.transforms[:3]} == {Absence.RESTORED}
    assert fs == []


def test_dumps_cut_short_while_the_log_is_complete_gate(tmp_path: Path) -> None:
    b, lb = _full(tmp_path, "baseline")
    c, lc = _full(tmp_path, "candidate")
    for p in sorted((c / "graphs").iterdir())[3:]:  # the job was killed while dumping / half-copied folder
        p.unlink()
    a, fs = _analyse(b, c, lb, lc)
    assert [d.missing for d in a.transforms[3:]] == [Absence.CUT, Absence.CUT]
    assert a.only_baseline == ()  # they did not run in the baseline only
    (cut,) = fs
    assert (cut.code, cut.category, cut.severity) == ("ADG011", Category.INCOMPLETE_RUN, Severity.ERROR)
    assert "candidate" in cut.message
    assert "stop after sharding/sharding_transform_executor" in cut.message
    assert dict(cut.evidence)["not_dumped"] == ["post_load_fusion/fuse_rmsnorm", "compile/compile_model"]
    assert "ran in the" not in markdown(view(a, NO_CONTEXT))


def test_dumps_missing_at_the_start_gate_too(tmp_path: Path) -> None:
    b, lb = _full(tmp_path, "baseline")
    c, lc = _full(tmp_path, "candidate")
    for p in sorted((c / "graphs").iterdir())[:2]:
        p.unlink()
    _, fs = _analyse(b, c, lb, lc)
    (cut,) = fs
    assert cut.code == "ADG011"
    assert "start late" in cut.message


def test_a_run_that_stopped_is_not_a_cut_dump_folder(tmp_path: Path) -> None:
    """A crashed candidate never reached the later transforms: the log's incomplete-run finding says so;
    the graph side neither calls the dumps cut nor says the transforms ran in the baseline only."""
    b, lb = _full(tmp_path, "baseline")
    c, _ = _full(tmp_path, "candidate")
    for p in sorted((c / "graphs").iterdir())[3:]:
        p.unlink()
    lc = replace(_log(c / "ad.log", [0, 1, 2, 3], end=State.INCOMPLETE), end=LogEnd.CRASHED)
    a, fs = _analyse(b, c, lb, lc)
    assert [d.missing for d in a.transforms[3:]] == [Absence.NOT_REACHED, Absence.NOT_REACHED]
    assert fs == []


def test_transform_that_ran_in_one_run_only(tmp_path: Path) -> None:
    b, lb = _full(tmp_path, "baseline")
    c = tmp_path / "candidate"
    steps = [s for k, s in enumerate(STEPS) if k != 3]
    write_run(c, [(*s, spec) for s, spec in zip(steps, [UNFUSED] * 4, strict=True)])
    lc = _log(c / "ad.log", [0, 1, 2, 4])
    a, fs = _analyse(b, c, lb, lc)
    assert a.only_baseline == ("post_load_fusion/fuse_rmsnorm",)
    assert _codes(fs) == ["ADG004", "ADG006"]  # compile_model: fused norms in the baseline only


def test_log_dump_conflict_gates_only_where_matches_must_show(tmp_path: Path) -> None:
    steps = [("export", "export_to_gm", UNFUSED), ("pattern_matcher", "match_rmsnorm_pattern", UNFUSED),
             ("pattern_matcher", "detect_hidden_states", UNFUSED),
             ("cache_init", "initialize_cache", UNFUSED)]
    for run in ("baseline", "candidate"):
        write_run(tmp_path / run, steps)
    log = make_log(tmp_path / "ad.log", [(s, t, A, 4) for s, t, _ in steps])
    _, fs = _analyse(tmp_path / "baseline", tmp_path / "candidate", log, log)
    got = sorted((f.code, f.transform, f.severity.value) for f in fs)
    # Graph-stage matchers must change the graph (ADG012, per run); transforms acting outside it leave the
    # dump unchanged in both runs alike, which is how they work: no note.
    assert got == [("ADG012", "match_rmsnorm_pattern", "error"), ("ADG012", "match_rmsnorm_pattern", "error")]
    # When only one run logs matches there, the unchanged dump is worth a note (ADG008, info) for that run.
    quiet = make_log(tmp_path / "quiet.log",
                     [(s, t, A, 0 if t == "initialize_cache" else 4) for s, t, _ in steps])
    _, fs = _analyse(tmp_path / "baseline", tmp_path / "candidate", quiet, log)
    notes = [(f.code, f.transform, f.severity.value, f.message.split(":")[0])
             for f in fs if f.code == "ADG008"]
    assert notes == [("ADG008", "initialize_cache", "info", "candidate")]


def _rows(count_b: int, count_c: int) -> list[TransformComparison]:
    rope = ("pattern_matcher", "match_rope_pattern", 0)
    return [TransformComparison(*rope, Side(A, count_b), Side(A, count_c))]


def _cascade(root: Path) -> tuple[Path, Path]:
    """A norm stays unfused in layer 1 (the first divergence), then rope fuses in the baseline only."""
    b, c = root / "baseline", root / "candidate"
    write_run(b, [("export", "export_to_gm", UNFUSED), ("post_load_fusion", "fuse_rmsnorm", FUSED),
                  ("pattern_matcher", "match_rope_pattern", Spec(layers=3, rope_fused=True))])
    norm = Spec(layers=3, unfused_layers=(1,))
    write_run(c, [("export", "export_to_gm", UNFUSED), ("post_load_fusion", "fuse_rmsnorm", norm),
                  ("pattern_matcher", "match_rope_pattern", norm)])
    return b, c


def test_regions_where_the_count_changed_are_evidence_not_warnings(tmp_path: Path) -> None:
    b, c = _cascade(tmp_path)
    a = analyze_graphs(b / "graphs", c / "graphs")
    rope = a.transforms[-1]
    assert len(rope.new_regions) == 3  # one rope per layer; the norm regions continue from fuse_rmsnorm
    assert len(rope.regions) == 5
    # The log reports the same count at match_rope_pattern: the new regions are unexplained, worth a look.
    (warn,) = [f for f in classify(a, None, None, _rows(3, 3)) if f.code == "ADG005"]
    assert warn.severity is Severity.WARNING
    assert dict(warn.evidence)["graph_regions"]["count"] == 3
    # The log reports 3 -> 0: the regions are that change's expected effect, attached as its evidence.
    assert [f.code for f in classify(a, None, None, _rows(3, 0))] == ["ADG004"]
    loss = Finding("ADL001", Category.MATCH_LOSS, Severity.ERROR, "3 -> 0", transform="match_rope_pattern",
                   stage="pattern_matcher")
    (linked,) = attach((loss,), a)
    assert dict(linked.evidence)["graph_regions"]["count"] == 3


def test_a_moved_transform_is_reported_once(tmp_path: Path) -> None:
    b, c = tmp_path / "baseline", tmp_path / "candidate"
    order = [("export", "export_to_gm", UNFUSED), ("post_export", "cleanup_noop_slice", UNFUSED),
             ("post_export", "cleanup_noop_add", UNFUSED), ("post_load_fusion", "fuse_rmsnorm", FUSED)]
    write_run(b, order)
    write_run(c, [order[0], order[2], order[1], order[3]])
    a = analyze_graphs(b / "graphs", c / "graphs")
    (moved,) = [f for f in classify(a, None, None) if f.code == "ADG013"]
    assert moved.transform in ("cleanup_noop_slice", "cleanup_noop_add")
    assert "in the baseline" in moved.message
    assert "in the candidate" in moved.message
    assert "another place in the pipeline" in markdown(view(a, NO_CONTEXT))


F32 = "torch.float32"


def _dump(path: Path, transform: str, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Transform: {transform}\n# Stage: post_export\n\n" + "\n".join(lines) + "\n", "utf-8")


def test_metadata_lost_on_unaligned_nodes_of_an_op_the_baseline_types(tmp_path: Path) -> None:
    x, a = f"%x : 1x8 : {F32}", f"%a = aten.neg.default(%x : 1x8 : {F32}) : 1x8 : {F32}"
    g = f"%g = aten.sigmoid.default(%x : 1x8 : {F32}) : 1x8 : {F32}"
    for run in ("baseline", "candidate"):
        _dump(tmp_path / run / "graphs" / "001_post_export_t1.txt", "t1", [x, a, "output %a"])
    _dump(tmp_path / "baseline" / "graphs" / "002_post_export_t2.txt", "t2",
          [x, a, f"%r = aten.relu.default(%a : 1x8 : {F32}) : 1x8 : {F32}", g, "output %r, %g"])
    _dump(tmp_path / "candidate" / "graphs" / "002_post_export_t2.txt", "t2",
          [x, a, f"%s = aten.sigmoid.default(%a : 1x8 : {F32}) : ? : N/A",
           f"%r = aten.relu.default(%s : ? : unknown) : 1x8 : {F32}", g, "output %r, %g"])
    an = analyze_graphs(tmp_path / "baseline" / "graphs", tmp_path / "candidate" / "graphs")
    (f,) = [f for f in classify(an, None, None) if f.category is Category.METADATA_LOSS]
    assert f.code == "ADG002"
    assert "sigmoid (1)" in f.message


def test_new_nodes_without_metadata_in_both_runs_are_no_loss(tmp_path: Path) -> None:
    """A rewrite that creates one more node of an op that has no metadata in either run is no loss (the
    counter-shifted GEMM fusion: one more ``split_output`` in the candidate)."""
    x = f"%x : 1x8 : {F32}"
    split = "%{n} = <function split_output at 0x7f00>(%x : 1x8 : " + F32 + ") : ? : N/A"
    for run in ("baseline", "candidate"):
        _dump(tmp_path / run / "graphs" / "001_post_export_t1.txt", "t1", [x, "output %x"])
    _dump(tmp_path / "baseline" / "graphs" / "002_post_export_t2.txt", "t2",
          [x, split.format(n="split_output"), "output %split_output"])
    _dump(tmp_path / "candidate" / "graphs" / "002_post_export_t2.txt", "t2",
          [x, split.format(n="split_output"), split.format(n="split_output_1"),
           "output %split_output, %split_output_1"])
    an = analyze_graphs(tmp_path / "baseline" / "graphs", tmp_path / "candidate" / "graphs")
    assert [f for f in classify(an, None, None) if f.category is Category.METADATA_LOSS] == []
    shutil.rmtree(tmp_path / "baseline")


def test_a_region_renamed_by_a_later_pass_is_no_new_region(tmp_path: Path) -> None:
    """A pass that renames every node in both runs (a re-trace, a compile) carries the regions on: they hold
    the same ops, so nothing new appears there (no "N rewritten region(s) appear" at each later transform)."""
    b, c = tmp_path / "baseline", tmp_path / "candidate"
    norm = Spec(layers=3, unfused_layers=(1,))
    write_run(b, [("export", "export_to_gm", UNFUSED), ("post_load_fusion", "fuse_rmsnorm", FUSED),
                  ("compile", "compile_model", Spec(layers=3, counter_offset=7))])
    write_run(c, [("export", "export_to_gm", UNFUSED), ("post_load_fusion", "fuse_rmsnorm", norm),
                  ("compile", "compile_model", Spec(layers=3, unfused_layers=(1,), counter_offset=7))])
    a = analyze_graphs(b / "graphs", c / "graphs")
    fuse, comp = a.transforms[1], a.transforms[2]
    assert len(fuse.new_regions) == 2
    assert len(comp.regions) == 2
    assert comp.new_regions == ()
    assert [f.code for f in classify(a, None, None)] == ["ADG004"]
