"""Causal groups: which findings follow from which root cause, how the root cause reads, and the order."""

from __future__ import annotations

from pathlib import Path

from ad_diff import pipeline
from ad_diff.core.model import Finding, Severity, Side, State, TransformComparison
from ad_diff.core.rules import Rule
from ad_diff.explain.groups import build, marked
from ad_diff.explain.model import CauseKind
from ad_diff.kinds.log.rules import COLLAPSE, FAILED, GAIN, INCOMPLETE, PARTIAL
from ad_diff.settings import Settings
from tests.conftest import FIXTURES

REGION = Rule("ADG005", "region-rewritten", "structure_change", Severity.WARNING, "{transform}: regions", "")
SHIFT = Rule("ADG006", "one-sided", "structure_change", Severity.INFO, "{transform} ran in one run only", "")


def _row(stage: str, name: str, b: int | State, c: int | State) -> TransformComparison:
    def side(x: int | State) -> Side:
        return Side(State.APPLIED, x) if isinstance(x, int) else Side(x, None)

    return TransformComparison(stage, name, 0, side(b), side(c))


ROWS = (
    _row("export", "export_to_gm", 1, 1),
    _row("post_export", "cleanup", 0, 2),
    _row("pattern_matcher", "match_a", 4, 2),
    _row("pattern_matcher", "match_b", 4, 2),
    _row("pattern_matcher", "match_c", 3, 3),
)


def _hint(kind: str, cause: str, message: str = "m") -> dict[str, object]:
    return {"kind": kind, "cause_transform": cause, "cause_stage": "", "message": message, "nodes": []}


def _loss(t: str, *hints: dict[str, object], before: int = 4, after: int = 2) -> Finding:
    ev = {"before": before, "after": after, "lost": before - after} | (
        {"root_cause": list(hints)} if hints else {}
    )
    return COLLAPSE.make(
        transform=t, stage="pattern_matcher", before=before, after=after, collapse=True, evidence=ev
    )


def _scenario(name: str):
    root = FIXTURES / "scenarios" / name
    return pipeline.run(Settings(root / "baseline", root / "candidate"))


def test_hints_chain_a_cascade_to_the_first_transform_where_it_appears() -> None:
    form = (
        "match_a rewrote `split -> getitem` in the baseline; in the candidate that part of the graph is "
        "`narrow` since post_export/cleanup"
    )
    findings = [
        _loss("match_b", _hint("op_form_changed_upstream", "match_a")),
        _loss("match_a", _hint("op_form_changed_upstream", "cleanup", form)),
        REGION.make(transform="cleanup", stage="post_export"),
    ]
    ordered, groups = build(findings, ROWS, "error", graph_compared=True)
    (g,) = groups
    assert (g.cause, g.transform, g.position) == (CauseKind.OP_FORM_CHANGED, "cleanup", 1)
    assert g.title == "op form changed by cleanup"
    assert g.evidence == "`split -> getitem` became `narrow`, which match_a no longer matches"
    assert [f.transform for f in g.consequences] == ["match_a", "match_b"]  # pipeline order
    assert [f.transform for f in ordered] == ["cleanup", "match_a", "match_b"]  # root first
    assert all(f.group == 1 for f in ordered)
    # the region at a transform whose count changed is that change's evidence, not a warning of its own
    assert g.root[0].severity is Severity.INFO


def test_the_exported_graph_is_named_when_the_cascade_starts_at_export() -> None:
    findings = [
        _loss("match_a", _hint("op_form_changed_upstream", "export_to_gm")),
        REGION.make(
            transform="export_to_gm",
            stage="export",
            evidence={"regions": [{"baseline": ["split_1"], "candidate": ["slice_2"]}]},
        ),
    ]
    (g,) = build(findings, ROWS, "error", graph_compared=True)[1]
    assert g.cause is CauseKind.GRAPH_DIFFERS
    assert g.title == "the exported graph (export_to_gm) differs at node split_1"
    assert (
        g.root[0].severity is Severity.WARNING
    )  # export's count did not change: the difference is the model's


def test_without_evidence_two_losses_stay_two_root_causes() -> None:
    _, groups = build([_loss("match_b"), _loss("match_a")], ROWS, "error", graph_compared=False)
    assert [(g.cause, g.transform) for g in groups] == [
        (CauseKind.MATCH_LOST, "match_a"),
        (CauseKind.MATCH_LOST, "match_b"),
    ]
    assert groups[0].evidence == "no graph dumps to trace it upstream (log-only comparison)"


def test_a_transform_that_lost_matches_itself_heads_its_own_cascade() -> None:
    own = _loss("match_a", _hint("no_upstream_difference", ""))
    (g,) = build([own, _loss("match_b", _hint("op_form_changed_upstream", "match_a"))], ROWS, "error", True)[
        1
    ]
    assert g.cause is CauseKind.MATCH_LOST
    assert g.title == "match_a lost 2 of 4 matches (4 \u2192 2)"
    assert g.evidence.startswith("the graph it received was the same in both runs")


def test_config_likely_cause_links_downstream_and_a_failure_heads_its_group() -> None:
    rows = (*ROWS, _row("cache_init", "insert_cache", 2, 0))
    failed = FAILED.make(transform="match_c", stage="pattern_matcher", failure="RuntimeError: boom")
    down = PARTIAL.make(
        transform="insert_cache",
        stage="cache_init",
        before=2,
        after=0,
        pct=100,
        evidence={
            "before": 2,
            "after": 0,
            "lost": 2,
            "config_explanation": "likely_cause",
            "config_changes": ("transforms.match_c.enabled",),
        },
    )
    (g,) = build([down, failed], rows, "error")[1]
    assert (g.cause, g.transform) == (CauseKind.TRANSFORM_FAILED, "match_c")
    assert g.evidence == "failed in candidate: RuntimeError: boom"
    assert [f.transform for f in g.consequences] == ["insert_cache"]


def test_a_stopped_run_heads_what_it_never_reached() -> None:
    stop = INCOMPLETE.make(
        run="candidate",
        detail="crashed",
        transform="match_a",
        stage="pattern_matcher",
        evidence={"not_reached": ["match_b", "match_c"], "run": "candidate", "detail": "crashed"},
    )
    groups = build([SHIFT.make(transform="match_c", stage="pattern_matcher"), stop], ROWS, "error")[1]
    (g,) = groups
    assert (g.cause, g.title) == (CauseKind.INCOMPLETE_RUN, "candidate run stopped after match_a")
    assert [f.code for f in g.consequences] == ["ADG006"]


def test_gating_groups_come_first_then_pipeline_order() -> None:
    gain = GAIN.make(transform="cleanup", stage="post_export", before=0, after=2)
    warn = REGION.make(transform="match_c", stage="pattern_matcher")
    _, groups = build([warn, gain, _loss("match_b")], ROWS, "error")
    assert [(g.transform, g.cause) for g in groups] == [
        ("match_b", CauseKind.MATCH_LOST),
        ("match_c", CauseKind.OTHER),
        ("cleanup", CauseKind.IMPROVEMENT),
    ]
    assert [g.id for g in groups] == [1, 2, 3]


def test_every_finding_is_in_exactly_one_group_on_real_scenarios() -> None:
    for name in ("metadata_loss", "failed_transform", "op_form_change", "crash_midway", "config_explained"):
        result = _scenario(name)
        listed = [id(f) for g in result.groups for f in g.findings]
        assert sorted(listed) == sorted(id(f) for f in result.findings), name
        assert [f.group for f in result.findings] == sorted(f.group for f in result.findings)  # report order


def test_scenario_root_causes_read_as_the_cause() -> None:
    assert _scenario("metadata_loss").groups[0].title == "metadata lost at match_rope_pattern"
    g = _scenario("failed_transform").groups[0]
    assert (g.title, g.root[0].code) == ("match_eager_attention failed", "ADL004")
    assert g.evidence.endswith("; the graph it received was the same in both runs")
    assert [f.transform for f in g.consequences if f.severity is Severity.ERROR] == [
        "match_grouped_attention",
        "match_attention_layout",
        "insert_cached_attention",
    ]
    assert _scenario("config_explained").groups[0].title == "match_rmsnorm_pattern disabled by config"


def test_drift_joins_the_node_drift_or_the_different_inputs() -> None:
    drift = Rule("ADT001", "drift", "numeric_drift", Severity.ERROR, "tensor {tensor}: drift", "")
    first = Rule("ADT007", "first", "numeric_drift", Severity.WARNING, "first drifting node: {node}", "")
    inputs = Rule("ADT009", "inputs", "input", Severity.ERROR, "different inputs", "")
    out = drift.make(tensor="logits")
    (g,) = build([out, first.make(node="add_3", transform="match_a")], ROWS, "error")[1]
    assert (g.transform, [f.tensor for f in g.consequences]) == ("match_a", ["logits"])
    (g,) = build([out, inputs.make()], ROWS, "error")[1]
    assert (g.cause, g.title) == (CauseKind.INPUT, "the runs recorded different inputs")
    assert [f.code for f in g.root + g.consequences] == ["ADT009", "ADT001"]


def test_marked_titles_show_names_as_code() -> None:
    assert marked("match_a: a -> match_ab", ["match_a", "match_ab"]) == (
        ("match_a", True),
        (": a -> ", False),
        ("match_ab", True),
    )
    assert marked("plain", [None]) == (("plain", False),)


def test_log_only_pair(tmp_path: Path) -> None:
    from tests.ci_runs import pair

    base, cand = pair(tmp_path)
    result = pipeline.run(Settings(base, cand))
    assert [g.transform for g in result.groups] == ["match_rope_pattern", "fuse_gemms"]
    assert [g.cause for g in result.groups] == [CauseKind.MATCH_LOST, CauseKind.TRANSFORM_DISABLED]
